package io.github.mongowriteguard;

import com.mongodb.MongoNamespace;
import com.mongodb.ReadConcern;
import com.mongodb.ReadPreference;
import com.mongodb.WriteConcern;
import com.mongodb.client.AggregateIterable;
import com.mongodb.client.ChangeStreamIterable;
import com.mongodb.client.ClientSession;
import com.mongodb.client.DistinctIterable;
import com.mongodb.client.FindIterable;
import com.mongodb.client.ListIndexesIterable;
import com.mongodb.client.ListSearchIndexesIterable;
import com.mongodb.client.MapReduceIterable;
import com.mongodb.client.MongoCollection;
import com.mongodb.client.model.CountOptions;
import com.mongodb.client.model.CreateIndexOptions;
import com.mongodb.client.model.DropCollectionOptions;
import com.mongodb.client.model.DropIndexOptions;
import com.mongodb.client.model.EstimatedDocumentCountOptions;
import com.mongodb.client.model.IndexModel;
import com.mongodb.client.model.IndexOptions;
import com.mongodb.client.model.RenameCollectionOptions;
import com.mongodb.client.model.SearchIndexModel;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.bson.Document;
import org.bson.codecs.configuration.CodecRegistry;
import org.bson.conversions.Bson;
import org.jspecify.annotations.Nullable;

/**
 * The part of a {@link MongoCollection} the guard leaves as it is, handed to another collection unchanged: the
 * accessors, the reads, change streams, {@code mapReduce}, {@code drop}, the indexes and search indexes and
 * {@code renameCollection}, in the order the driver's interface declares them, with the driver's parameter names. The
 * base of {@link GuardedMongoCollection}. The write methods and the {@code withX} methods are deliberately not here:
 * the guarded class must declare each one itself, and the compiler refuses it when one is missing (a write method
 * forwarded from here would bypass the guard silently).
 *
 * @param <T> the collection's document class
 */
abstract class ForwardingMongoCollection<T> implements MongoCollection<T> {
    private final MongoCollection<T> delegate;

    ForwardingMongoCollection(MongoCollection<T> delegate) {
        this.delegate = delegate;
    }

    /** The collection every method is handed to. */
    final MongoCollection<T> delegate() {
        return delegate;
    }

    @Override
    public MongoNamespace getNamespace() {
        return delegate.getNamespace();
    }

    @Override
    public Class<T> getDocumentClass() {
        return delegate.getDocumentClass();
    }

    @Override
    public CodecRegistry getCodecRegistry() {
        return delegate.getCodecRegistry();
    }

    @Override
    public ReadPreference getReadPreference() {
        return delegate.getReadPreference();
    }

    @Override
    public WriteConcern getWriteConcern() {
        return delegate.getWriteConcern();
    }

    @Override
    public ReadConcern getReadConcern() {
        return delegate.getReadConcern();
    }

    @Override
    public @Nullable Long getTimeout(TimeUnit timeUnit) {
        return delegate.getTimeout(timeUnit);
    }

    @Override
    public long countDocuments() {
        return delegate.countDocuments();
    }

    @Override
    public long countDocuments(Bson filter) {
        return delegate.countDocuments(filter);
    }

    @Override
    public long countDocuments(Bson filter, CountOptions options) {
        return delegate.countDocuments(filter, options);
    }

    @Override
    public long countDocuments(ClientSession clientSession) {
        return delegate.countDocuments(clientSession);
    }

    @Override
    public long countDocuments(ClientSession clientSession, Bson filter) {
        return delegate.countDocuments(clientSession, filter);
    }

    @Override
    public long countDocuments(ClientSession clientSession, Bson filter, CountOptions options) {
        return delegate.countDocuments(clientSession, filter, options);
    }

    @Override
    public long estimatedDocumentCount() {
        return delegate.estimatedDocumentCount();
    }

    @Override
    public long estimatedDocumentCount(EstimatedDocumentCountOptions options) {
        return delegate.estimatedDocumentCount(options);
    }

    @Override
    public <TResult> DistinctIterable<TResult> distinct(String fieldName, Class<TResult> resultClass) {
        return delegate.distinct(fieldName, resultClass);
    }

    @Override
    public <TResult> DistinctIterable<TResult> distinct(String fieldName, Bson filter, Class<TResult> resultClass) {
        return delegate.distinct(fieldName, filter, resultClass);
    }

    @Override
    public <TResult> DistinctIterable<TResult> distinct(
            ClientSession clientSession, String fieldName, Class<TResult> resultClass) {
        return delegate.distinct(clientSession, fieldName, resultClass);
    }

    @Override
    public <TResult> DistinctIterable<TResult> distinct(
            ClientSession clientSession, String fieldName, Bson filter, Class<TResult> resultClass) {
        return delegate.distinct(clientSession, fieldName, filter, resultClass);
    }

    @Override
    public FindIterable<T> find() {
        return delegate.find();
    }

    @Override
    public <TResult> FindIterable<TResult> find(Class<TResult> resultClass) {
        return delegate.find(resultClass);
    }

    @Override
    public FindIterable<T> find(Bson filter) {
        return delegate.find(filter);
    }

    @Override
    public <TResult> FindIterable<TResult> find(Bson filter, Class<TResult> resultClass) {
        return delegate.find(filter, resultClass);
    }

    @Override
    public FindIterable<T> find(ClientSession clientSession) {
        return delegate.find(clientSession);
    }

    @Override
    public <TResult> FindIterable<TResult> find(ClientSession clientSession, Class<TResult> resultClass) {
        return delegate.find(clientSession, resultClass);
    }

    @Override
    public FindIterable<T> find(ClientSession clientSession, Bson filter) {
        return delegate.find(clientSession, filter);
    }

    @Override
    public <TResult> FindIterable<TResult> find(ClientSession clientSession, Bson filter, Class<TResult> resultClass) {
        return delegate.find(clientSession, filter, resultClass);
    }

    @Override
    public AggregateIterable<T> aggregate(List<? extends Bson> pipeline) {
        return delegate.aggregate(pipeline);
    }

    @Override
    public <TResult> AggregateIterable<TResult> aggregate(List<? extends Bson> pipeline, Class<TResult> resultClass) {
        return delegate.aggregate(pipeline, resultClass);
    }

    @Override
    public AggregateIterable<T> aggregate(ClientSession clientSession, List<? extends Bson> pipeline) {
        return delegate.aggregate(clientSession, pipeline);
    }

    @Override
    public <TResult> AggregateIterable<TResult> aggregate(
            ClientSession clientSession, List<? extends Bson> pipeline, Class<TResult> resultClass) {
        return delegate.aggregate(clientSession, pipeline, resultClass);
    }

    @Override
    public ChangeStreamIterable<T> watch() {
        return delegate.watch();
    }

    @Override
    public <TResult> ChangeStreamIterable<TResult> watch(Class<TResult> resultClass) {
        return delegate.watch(resultClass);
    }

    @Override
    public ChangeStreamIterable<T> watch(List<? extends Bson> pipeline) {
        return delegate.watch(pipeline);
    }

    @Override
    public <TResult> ChangeStreamIterable<TResult> watch(List<? extends Bson> pipeline, Class<TResult> resultClass) {
        return delegate.watch(pipeline, resultClass);
    }

    @Override
    public ChangeStreamIterable<T> watch(ClientSession clientSession) {
        return delegate.watch(clientSession);
    }

    @Override
    public <TResult> ChangeStreamIterable<TResult> watch(ClientSession clientSession, Class<TResult> resultClass) {
        return delegate.watch(clientSession, resultClass);
    }

    @Override
    public ChangeStreamIterable<T> watch(ClientSession clientSession, List<? extends Bson> pipeline) {
        return delegate.watch(clientSession, pipeline);
    }

    @Override
    public <TResult> ChangeStreamIterable<TResult> watch(
            ClientSession clientSession, List<? extends Bson> pipeline, Class<TResult> resultClass) {
        return delegate.watch(clientSession, pipeline, resultClass);
    }

    @Override
    @Deprecated
    public MapReduceIterable<T> mapReduce(String mapFunction, String reduceFunction) {
        return delegate.mapReduce(mapFunction, reduceFunction);
    }

    @Override
    @Deprecated
    public <TResult> MapReduceIterable<TResult> mapReduce(
            String mapFunction, String reduceFunction, Class<TResult> resultClass) {
        return delegate.mapReduce(mapFunction, reduceFunction, resultClass);
    }

    @Override
    @Deprecated
    public MapReduceIterable<T> mapReduce(ClientSession clientSession, String mapFunction, String reduceFunction) {
        return delegate.mapReduce(clientSession, mapFunction, reduceFunction);
    }

    @Override
    @Deprecated
    public <TResult> MapReduceIterable<TResult> mapReduce(
            ClientSession clientSession, String mapFunction, String reduceFunction, Class<TResult> resultClass) {
        return delegate.mapReduce(clientSession, mapFunction, reduceFunction, resultClass);
    }

    @Override
    public void drop() {
        delegate.drop();
    }

    @Override
    public void drop(ClientSession clientSession) {
        delegate.drop(clientSession);
    }

    @Override
    public void drop(DropCollectionOptions dropCollectionOptions) {
        delegate.drop(dropCollectionOptions);
    }

    @Override
    public void drop(ClientSession clientSession, DropCollectionOptions dropCollectionOptions) {
        delegate.drop(clientSession, dropCollectionOptions);
    }

    @Override
    public String createSearchIndex(String indexName, Bson definition) {
        return delegate.createSearchIndex(indexName, definition);
    }

    @Override
    public String createSearchIndex(Bson definition) {
        return delegate.createSearchIndex(definition);
    }

    @Override
    public List<String> createSearchIndexes(List<SearchIndexModel> searchIndexModels) {
        return delegate.createSearchIndexes(searchIndexModels);
    }

    @Override
    public void updateSearchIndex(String indexName, Bson definition) {
        delegate.updateSearchIndex(indexName, definition);
    }

    @Override
    public void dropSearchIndex(String indexName) {
        delegate.dropSearchIndex(indexName);
    }

    @Override
    public ListSearchIndexesIterable<Document> listSearchIndexes() {
        return delegate.listSearchIndexes();
    }

    @Override
    public <TResult> ListSearchIndexesIterable<TResult> listSearchIndexes(Class<TResult> resultClass) {
        return delegate.listSearchIndexes(resultClass);
    }

    @Override
    public String createIndex(Bson keys) {
        return delegate.createIndex(keys);
    }

    @Override
    public String createIndex(Bson keys, IndexOptions indexOptions) {
        return delegate.createIndex(keys, indexOptions);
    }

    @Override
    public String createIndex(ClientSession clientSession, Bson keys) {
        return delegate.createIndex(clientSession, keys);
    }

    @Override
    public String createIndex(ClientSession clientSession, Bson keys, IndexOptions indexOptions) {
        return delegate.createIndex(clientSession, keys, indexOptions);
    }

    @Override
    public List<String> createIndexes(List<IndexModel> indexes) {
        return delegate.createIndexes(indexes);
    }

    @Override
    public List<String> createIndexes(List<IndexModel> indexes, CreateIndexOptions createIndexOptions) {
        return delegate.createIndexes(indexes, createIndexOptions);
    }

    @Override
    public List<String> createIndexes(ClientSession clientSession, List<IndexModel> indexes) {
        return delegate.createIndexes(clientSession, indexes);
    }

    @Override
    public List<String> createIndexes(
            ClientSession clientSession, List<IndexModel> indexes, CreateIndexOptions createIndexOptions) {
        return delegate.createIndexes(clientSession, indexes, createIndexOptions);
    }

    @Override
    public ListIndexesIterable<Document> listIndexes() {
        return delegate.listIndexes();
    }

    @Override
    public <TResult> ListIndexesIterable<TResult> listIndexes(Class<TResult> resultClass) {
        return delegate.listIndexes(resultClass);
    }

    @Override
    public ListIndexesIterable<Document> listIndexes(ClientSession clientSession) {
        return delegate.listIndexes(clientSession);
    }

    @Override
    public <TResult> ListIndexesIterable<TResult> listIndexes(ClientSession clientSession, Class<TResult> resultClass) {
        return delegate.listIndexes(clientSession, resultClass);
    }

    @Override
    public void dropIndex(String indexName) {
        delegate.dropIndex(indexName);
    }

    @Override
    public void dropIndex(String indexName, DropIndexOptions dropIndexOptions) {
        delegate.dropIndex(indexName, dropIndexOptions);
    }

    @Override
    public void dropIndex(Bson keys) {
        delegate.dropIndex(keys);
    }

    @Override
    public void dropIndex(Bson keys, DropIndexOptions dropIndexOptions) {
        delegate.dropIndex(keys, dropIndexOptions);
    }

    @Override
    public void dropIndex(ClientSession clientSession, String indexName) {
        delegate.dropIndex(clientSession, indexName);
    }

    @Override
    public void dropIndex(ClientSession clientSession, Bson keys) {
        delegate.dropIndex(clientSession, keys);
    }

    @Override
    public void dropIndex(ClientSession clientSession, String indexName, DropIndexOptions dropIndexOptions) {
        delegate.dropIndex(clientSession, indexName, dropIndexOptions);
    }

    @Override
    public void dropIndex(ClientSession clientSession, Bson keys, DropIndexOptions dropIndexOptions) {
        delegate.dropIndex(clientSession, keys, dropIndexOptions);
    }

    @Override
    public void dropIndexes() {
        delegate.dropIndexes();
    }

    @Override
    public void dropIndexes(ClientSession clientSession) {
        delegate.dropIndexes(clientSession);
    }

    @Override
    public void dropIndexes(DropIndexOptions dropIndexOptions) {
        delegate.dropIndexes(dropIndexOptions);
    }

    @Override
    public void dropIndexes(ClientSession clientSession, DropIndexOptions dropIndexOptions) {
        delegate.dropIndexes(clientSession, dropIndexOptions);
    }

    @Override
    public void renameCollection(MongoNamespace newCollectionNamespace) {
        delegate.renameCollection(newCollectionNamespace);
    }

    @Override
    public void renameCollection(
            MongoNamespace newCollectionNamespace, RenameCollectionOptions renameCollectionOptions) {
        delegate.renameCollection(newCollectionNamespace, renameCollectionOptions);
    }

    @Override
    public void renameCollection(ClientSession clientSession, MongoNamespace newCollectionNamespace) {
        delegate.renameCollection(clientSession, newCollectionNamespace);
    }

    @Override
    public void renameCollection(
            ClientSession clientSession,
            MongoNamespace newCollectionNamespace,
            RenameCollectionOptions renameCollectionOptions) {
        delegate.renameCollection(clientSession, newCollectionNamespace, renameCollectionOptions);
    }
}
