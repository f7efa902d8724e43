package io.github.mongowriteguard;

import com.mongodb.MongoNamespace;
import com.mongodb.ReadConcern;
import com.mongodb.ReadPreference;
import com.mongodb.WriteConcern;
import com.mongodb.bulk.BulkWriteResult;
import com.mongodb.client.AggregateIterable;
import com.mongodb.client.ChangeStreamIterable;
import com.mongodb.client.ClientSession;
import com.mongodb.client.DistinctIterable;
import com.mongodb.client.FindIterable;
import com.mongodb.client.ListIndexesIterable;
import com.mongodb.client.ListSearchIndexesIterable;
import com.mongodb.client.MapReduceIterable;
import com.mongodb.client.MongoCollection;
import com.mongodb.client.model.BulkWriteOptions;
import com.mongodb.client.model.CountOptions;
import com.mongodb.client.model.CreateIndexOptions;
import com.mongodb.client.model.DeleteOptions;
import com.mongodb.client.model.DropCollectionOptions;
import com.mongodb.client.model.DropIndexOptions;
import com.mongodb.client.model.EstimatedDocumentCountOptions;
import com.mongodb.client.model.FindOneAndDeleteOptions;
import com.mongodb.client.model.FindOneAndReplaceOptions;
import com.mongodb.client.model.FindOneAndUpdateOptions;
import com.mongodb.client.model.IndexModel;
import com.mongodb.client.model.IndexOptions;
import com.mongodb.client.model.InsertManyOptions;
import com.mongodb.client.model.InsertOneOptions;
import com.mongodb.client.model.RenameCollectionOptions;
import com.mongodb.client.model.ReplaceOptions;
import com.mongodb.client.model.SearchIndexModel;
import com.mongodb.client.model.UpdateOptions;
import com.mongodb.client.model.WriteModel;
import com.mongodb.client.result.DeleteResult;
import com.mongodb.client.result.InsertManyResult;
import com.mongodb.client.result.InsertOneResult;
import com.mongodb.client.result.UpdateResult;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.bson.Document;
import org.bson.codecs.configuration.CodecRegistry;
import org.bson.conversions.Bson;
import org.jspecify.annotations.Nullable;

/**
 * A {@link GuardedCollection} as the driver's own {@link MongoCollection} interface, for code that takes a
 * {@code MongoCollection} (a repository, a framework's template): every write method goes through the guard, every
 * other method (reads, indexes, change streams, ...) to the collection as it is, and the {@code withX} methods return
 * a guarded view of the new collection. Get one from {@link GuardedCollection#asMongoCollection()}.
 *
 * <pre>{@code
 * MongoCollection<Document> orders = guard.wrap(client, client.getDatabase("shop").getCollection("orders")).asMongoCollection();
 * orders.updateOne(eq("_id", 42), set("state", "paid"));   // guarded: server deadline, same-copy retries
 * orders.find(eq("state", "paid"));                        // the driver's own read
 * }</pre>
 *
 * <p>Its write methods throw what {@link GuardedCollection}'s do (see the README's table of deliberate differences);
 * {@code withTimeout} is refused, as {@link WriteGuard#wrap} refuses a collection with a timeout.
 *
 * @param <T> the collection's document class
 */
final class GuardedMongoCollection<T> implements MongoCollection<T> {
    private final MongoCollection<T> collection;
    private final GuardedCollection<T> guarded;
    private final GuardedCollection.Rewrap rewrap;

    GuardedMongoCollection(
            MongoCollection<T> collection, GuardedCollection<T> guarded, GuardedCollection.Rewrap rewrap) {
        this.collection = collection;
        this.guarded = guarded;
        this.rewrap = rewrap;
    }

    private <X> MongoCollection<X> rewrap(MongoCollection<X> changed) {
        return rewrap.wrap(changed).asMongoCollection();
    }

    @Override
    public String toString() {
        return "GuardedMongoCollection{" + collection.getNamespace() + '}';
    }

    @Override
    public <TResult> AggregateIterable<TResult> aggregate(
            ClientSession clientSession, List<? extends Bson> list, Class<TResult> resultClass) {
        return collection.aggregate(clientSession, list, resultClass);
    }

    @Override
    public AggregateIterable<T> aggregate(ClientSession clientSession, List<? extends Bson> list) {
        return collection.aggregate(clientSession, list);
    }

    @Override
    public <TResult> AggregateIterable<TResult> aggregate(List<? extends Bson> list, Class<TResult> resultClass) {
        return collection.aggregate(list, resultClass);
    }

    @Override
    public AggregateIterable<T> aggregate(List<? extends Bson> list) {
        return collection.aggregate(list);
    }

    @Override
    public BulkWriteResult bulkWrite(
            ClientSession clientSession,
            List<? extends WriteModel<? extends T>> list,
            BulkWriteOptions bulkWriteOptions) {
        return guarded.bulkWrite(clientSession, list, bulkWriteOptions);
    }

    @Override
    public BulkWriteResult bulkWrite(ClientSession clientSession, List<? extends WriteModel<? extends T>> list) {
        return guarded.bulkWrite(clientSession, list);
    }

    @Override
    public BulkWriteResult bulkWrite(List<? extends WriteModel<? extends T>> list, BulkWriteOptions bulkWriteOptions) {
        return guarded.bulkWrite(list, bulkWriteOptions);
    }

    @Override
    public BulkWriteResult bulkWrite(List<? extends WriteModel<? extends T>> list) {
        return guarded.bulkWrite(list);
    }

    @Override
    public long countDocuments() {
        return collection.countDocuments();
    }

    @Override
    public long countDocuments(ClientSession clientSession, Bson filter, CountOptions countOptions) {
        return collection.countDocuments(clientSession, filter, countOptions);
    }

    @Override
    public long countDocuments(ClientSession clientSession, Bson filter) {
        return collection.countDocuments(clientSession, filter);
    }

    @Override
    public long countDocuments(ClientSession clientSession) {
        return collection.countDocuments(clientSession);
    }

    @Override
    public long countDocuments(Bson filter, CountOptions countOptions) {
        return collection.countDocuments(filter, countOptions);
    }

    @Override
    public long countDocuments(Bson filter) {
        return collection.countDocuments(filter);
    }

    @Override
    public String createIndex(ClientSession clientSession, Bson filter, IndexOptions indexOptions) {
        return collection.createIndex(clientSession, filter, indexOptions);
    }

    @Override
    public String createIndex(ClientSession clientSession, Bson filter) {
        return collection.createIndex(clientSession, filter);
    }

    @Override
    public String createIndex(Bson filter, IndexOptions indexOptions) {
        return collection.createIndex(filter, indexOptions);
    }

    @Override
    public String createIndex(Bson filter) {
        return collection.createIndex(filter);
    }

    @Override
    public List<String> createIndexes(
            ClientSession clientSession, List<IndexModel> list, CreateIndexOptions createIndexOptions) {
        return collection.createIndexes(clientSession, list, createIndexOptions);
    }

    @Override
    public List<String> createIndexes(ClientSession clientSession, List<IndexModel> list) {
        return collection.createIndexes(clientSession, list);
    }

    @Override
    public List<String> createIndexes(List<IndexModel> list, CreateIndexOptions createIndexOptions) {
        return collection.createIndexes(list, createIndexOptions);
    }

    @Override
    public List<String> createIndexes(List<IndexModel> list) {
        return collection.createIndexes(list);
    }

    @Override
    public String createSearchIndex(String string, Bson update) {
        return collection.createSearchIndex(string, update);
    }

    @Override
    public String createSearchIndex(Bson filter) {
        return collection.createSearchIndex(filter);
    }

    @Override
    public List<String> createSearchIndexes(List<SearchIndexModel> list) {
        return collection.createSearchIndexes(list);
    }

    @Override
    public DeleteResult deleteMany(ClientSession clientSession, Bson filter, DeleteOptions deleteOptions) {
        return guarded.deleteMany(clientSession, filter, deleteOptions);
    }

    @Override
    public DeleteResult deleteMany(ClientSession clientSession, Bson filter) {
        return guarded.deleteMany(clientSession, filter);
    }

    @Override
    public DeleteResult deleteMany(Bson filter, DeleteOptions deleteOptions) {
        return guarded.deleteMany(filter, deleteOptions);
    }

    @Override
    public DeleteResult deleteMany(Bson filter) {
        return guarded.deleteMany(filter);
    }

    @Override
    public DeleteResult deleteOne(ClientSession clientSession, Bson filter, DeleteOptions deleteOptions) {
        return guarded.deleteOne(clientSession, filter, deleteOptions);
    }

    @Override
    public DeleteResult deleteOne(ClientSession clientSession, Bson filter) {
        return guarded.deleteOne(clientSession, filter);
    }

    @Override
    public DeleteResult deleteOne(Bson filter, DeleteOptions deleteOptions) {
        return guarded.deleteOne(filter, deleteOptions);
    }

    @Override
    public DeleteResult deleteOne(Bson filter) {
        return guarded.deleteOne(filter);
    }

    @Override
    public <TResult> DistinctIterable<TResult> distinct(String string, Class<TResult> resultClass) {
        return collection.distinct(string, resultClass);
    }

    @Override
    public <TResult> DistinctIterable<TResult> distinct(String string, Bson update, Class<TResult> resultClass) {
        return collection.distinct(string, update, resultClass);
    }

    @Override
    public <TResult> DistinctIterable<TResult> distinct(
            ClientSession clientSession, String string, Class<TResult> resultClass) {
        return collection.distinct(clientSession, string, resultClass);
    }

    @Override
    public <TResult> DistinctIterable<TResult> distinct(
            ClientSession clientSession, String string, Bson update, Class<TResult> resultClass) {
        return collection.distinct(clientSession, string, update, resultClass);
    }

    @Override
    public void drop() {
        collection.drop();
    }

    @Override
    public void drop(DropCollectionOptions dropCollectionOptions) {
        collection.drop(dropCollectionOptions);
    }

    @Override
    public void drop(ClientSession clientSession, DropCollectionOptions dropCollectionOptions) {
        collection.drop(clientSession, dropCollectionOptions);
    }

    @Override
    public void drop(ClientSession clientSession) {
        collection.drop(clientSession);
    }

    @Override
    public void dropIndex(String string, DropIndexOptions dropIndexOptions) {
        collection.dropIndex(string, dropIndexOptions);
    }

    @Override
    public void dropIndex(String string) {
        collection.dropIndex(string);
    }

    @Override
    public void dropIndex(ClientSession clientSession, String string, DropIndexOptions dropIndexOptions) {
        collection.dropIndex(clientSession, string, dropIndexOptions);
    }

    @Override
    public void dropIndex(ClientSession clientSession, String string) {
        collection.dropIndex(clientSession, string);
    }

    @Override
    public void dropIndex(ClientSession clientSession, Bson filter, DropIndexOptions dropIndexOptions) {
        collection.dropIndex(clientSession, filter, dropIndexOptions);
    }

    @Override
    public void dropIndex(ClientSession clientSession, Bson filter) {
        collection.dropIndex(clientSession, filter);
    }

    @Override
    public void dropIndex(Bson filter, DropIndexOptions dropIndexOptions) {
        collection.dropIndex(filter, dropIndexOptions);
    }

    @Override
    public void dropIndex(Bson filter) {
        collection.dropIndex(filter);
    }

    @Override
    public void dropIndexes() {
        collection.dropIndexes();
    }

    @Override
    public void dropIndexes(DropIndexOptions dropIndexOptions) {
        collection.dropIndexes(dropIndexOptions);
    }

    @Override
    public void dropIndexes(ClientSession clientSession, DropIndexOptions dropIndexOptions) {
        collection.dropIndexes(clientSession, dropIndexOptions);
    }

    @Override
    public void dropIndexes(ClientSession clientSession) {
        collection.dropIndexes(clientSession);
    }

    @Override
    public void dropSearchIndex(String string) {
        collection.dropSearchIndex(string);
    }

    @Override
    public long estimatedDocumentCount() {
        return collection.estimatedDocumentCount();
    }

    @Override
    public long estimatedDocumentCount(EstimatedDocumentCountOptions estimatedDocumentCountOptions) {
        return collection.estimatedDocumentCount(estimatedDocumentCountOptions);
    }

    @Override
    public FindIterable<T> find() {
        return collection.find();
    }

    @Override
    public <TResult> FindIterable<TResult> find(Class<TResult> resultClass) {
        return collection.find(resultClass);
    }

    @Override
    public <TResult> FindIterable<TResult> find(ClientSession clientSession, Class<TResult> resultClass) {
        return collection.find(clientSession, resultClass);
    }

    @Override
    public <TResult> FindIterable<TResult> find(ClientSession clientSession, Bson filter, Class<TResult> resultClass) {
        return collection.find(clientSession, filter, resultClass);
    }

    @Override
    public FindIterable<T> find(ClientSession clientSession, Bson filter) {
        return collection.find(clientSession, filter);
    }

    @Override
    public FindIterable<T> find(ClientSession clientSession) {
        return collection.find(clientSession);
    }

    @Override
    public <TResult> FindIterable<TResult> find(Bson filter, Class<TResult> resultClass) {
        return collection.find(filter, resultClass);
    }

    @Override
    public FindIterable<T> find(Bson filter) {
        return collection.find(filter);
    }

    @Override
    public @Nullable T findOneAndDelete(
            ClientSession clientSession, Bson filter, FindOneAndDeleteOptions findOneAndDeleteOptions) {
        return guarded.findOneAndDelete(clientSession, filter, findOneAndDeleteOptions);
    }

    @Override
    public @Nullable T findOneAndDelete(ClientSession clientSession, Bson filter) {
        return guarded.findOneAndDelete(clientSession, filter);
    }

    @Override
    public @Nullable T findOneAndDelete(Bson filter, FindOneAndDeleteOptions findOneAndDeleteOptions) {
        return guarded.findOneAndDelete(filter, findOneAndDeleteOptions);
    }

    @Override
    public @Nullable T findOneAndDelete(Bson filter) {
        return guarded.findOneAndDelete(filter);
    }

    @Override
    public @Nullable T findOneAndReplace(
            ClientSession clientSession, Bson filter, T document, FindOneAndReplaceOptions findOneAndReplaceOptions) {
        return guarded.findOneAndReplace(clientSession, filter, document, findOneAndReplaceOptions);
    }

    @Override
    public @Nullable T findOneAndReplace(ClientSession clientSession, Bson filter, T document) {
        return guarded.findOneAndReplace(clientSession, filter, document);
    }

    @Override
    public @Nullable T findOneAndReplace(Bson filter, T document, FindOneAndReplaceOptions findOneAndReplaceOptions) {
        return guarded.findOneAndReplace(filter, document, findOneAndReplaceOptions);
    }

    @Override
    public @Nullable T findOneAndReplace(Bson filter, T document) {
        return guarded.findOneAndReplace(filter, document);
    }

    @Override
    public @Nullable T findOneAndUpdate(
            ClientSession clientSession,
            Bson filter,
            List<? extends Bson> list,
            FindOneAndUpdateOptions findOneAndUpdateOptions) {
        return guarded.findOneAndUpdate(clientSession, filter, list, findOneAndUpdateOptions);
    }

    @Override
    public @Nullable T findOneAndUpdate(ClientSession clientSession, Bson filter, List<? extends Bson> list) {
        return guarded.findOneAndUpdate(clientSession, filter, list);
    }

    @Override
    public @Nullable T findOneAndUpdate(
            ClientSession clientSession, Bson filter1, Bson update2, FindOneAndUpdateOptions findOneAndUpdateOptions) {
        return guarded.findOneAndUpdate(clientSession, filter1, update2, findOneAndUpdateOptions);
    }

    @Override
    public @Nullable T findOneAndUpdate(ClientSession clientSession, Bson filter1, Bson update2) {
        return guarded.findOneAndUpdate(clientSession, filter1, update2);
    }

    @Override
    public @Nullable T findOneAndUpdate(
            Bson filter, List<? extends Bson> list, FindOneAndUpdateOptions findOneAndUpdateOptions) {
        return guarded.findOneAndUpdate(filter, list, findOneAndUpdateOptions);
    }

    @Override
    public @Nullable T findOneAndUpdate(Bson filter, List<? extends Bson> list) {
        return guarded.findOneAndUpdate(filter, list);
    }

    @Override
    public @Nullable T findOneAndUpdate(Bson filter0, Bson update1, FindOneAndUpdateOptions findOneAndUpdateOptions) {
        return guarded.findOneAndUpdate(filter0, update1, findOneAndUpdateOptions);
    }

    @Override
    public @Nullable T findOneAndUpdate(Bson filter0, Bson update1) {
        return guarded.findOneAndUpdate(filter0, update1);
    }

    @Override
    public CodecRegistry getCodecRegistry() {
        return collection.getCodecRegistry();
    }

    @Override
    public Class<T> getDocumentClass() {
        return collection.getDocumentClass();
    }

    @Override
    public MongoNamespace getNamespace() {
        return collection.getNamespace();
    }

    @Override
    public ReadConcern getReadConcern() {
        return collection.getReadConcern();
    }

    @Override
    public ReadPreference getReadPreference() {
        return collection.getReadPreference();
    }

    @Override
    public Long getTimeout(TimeUnit timeUnit) {
        return collection.getTimeout(timeUnit);
    }

    @Override
    public WriteConcern getWriteConcern() {
        return collection.getWriteConcern();
    }

    @Override
    public InsertManyResult insertMany(
            ClientSession clientSession, List<? extends T> list, InsertManyOptions insertManyOptions) {
        return guarded.insertMany(clientSession, list, insertManyOptions);
    }

    @Override
    public InsertManyResult insertMany(ClientSession clientSession, List<? extends T> list) {
        return guarded.insertMany(clientSession, list);
    }

    @Override
    public InsertManyResult insertMany(List<? extends T> list, InsertManyOptions insertManyOptions) {
        return guarded.insertMany(list, insertManyOptions);
    }

    @Override
    public InsertManyResult insertMany(List<? extends T> list) {
        return guarded.insertMany(list);
    }

    @Override
    public InsertOneResult insertOne(T document, InsertOneOptions insertOneOptions) {
        return guarded.insertOne(document, insertOneOptions);
    }

    @Override
    public InsertOneResult insertOne(T document) {
        return guarded.insertOne(document);
    }

    @Override
    public InsertOneResult insertOne(ClientSession clientSession, T document, InsertOneOptions insertOneOptions) {
        return guarded.insertOne(clientSession, document, insertOneOptions);
    }

    @Override
    public InsertOneResult insertOne(ClientSession clientSession, T document) {
        return guarded.insertOne(clientSession, document);
    }

    @Override
    public ListIndexesIterable<Document> listIndexes() {
        return collection.listIndexes();
    }

    @Override
    public <TResult> ListIndexesIterable<TResult> listIndexes(Class<TResult> resultClass) {
        return collection.listIndexes(resultClass);
    }

    @Override
    public <TResult> ListIndexesIterable<TResult> listIndexes(ClientSession clientSession, Class<TResult> resultClass) {
        return collection.listIndexes(clientSession, resultClass);
    }

    @Override
    public ListIndexesIterable<Document> listIndexes(ClientSession clientSession) {
        return collection.listIndexes(clientSession);
    }

    @Override
    public ListSearchIndexesIterable<Document> listSearchIndexes() {
        return collection.listSearchIndexes();
    }

    @Override
    public <TResult> ListSearchIndexesIterable<TResult> listSearchIndexes(Class<TResult> resultClass) {
        return collection.listSearchIndexes(resultClass);
    }

    @Override
    public <TResult> MapReduceIterable<TResult> mapReduce(String string0, String string1, Class<TResult> resultClass) {
        return collection.mapReduce(string0, string1, resultClass);
    }

    @Override
    public MapReduceIterable<T> mapReduce(String string0, String string1) {
        return collection.mapReduce(string0, string1);
    }

    @Override
    public <TResult> MapReduceIterable<TResult> mapReduce(
            ClientSession clientSession, String string1, String string2, Class<TResult> resultClass) {
        return collection.mapReduce(clientSession, string1, string2, resultClass);
    }

    @Override
    public MapReduceIterable<T> mapReduce(ClientSession clientSession, String string1, String string2) {
        return collection.mapReduce(clientSession, string1, string2);
    }

    @Override
    public void renameCollection(MongoNamespace mongoNamespace, RenameCollectionOptions renameCollectionOptions) {
        collection.renameCollection(mongoNamespace, renameCollectionOptions);
    }

    @Override
    public void renameCollection(MongoNamespace mongoNamespace) {
        collection.renameCollection(mongoNamespace);
    }

    @Override
    public void renameCollection(
            ClientSession clientSession,
            MongoNamespace mongoNamespace,
            RenameCollectionOptions renameCollectionOptions) {
        collection.renameCollection(clientSession, mongoNamespace, renameCollectionOptions);
    }

    @Override
    public void renameCollection(ClientSession clientSession, MongoNamespace mongoNamespace) {
        collection.renameCollection(clientSession, mongoNamespace);
    }

    @Override
    public UpdateResult replaceOne(
            ClientSession clientSession, Bson filter, T document, ReplaceOptions replaceOptions) {
        return guarded.replaceOne(clientSession, filter, document, replaceOptions);
    }

    @Override
    public UpdateResult replaceOne(ClientSession clientSession, Bson filter, T document) {
        return guarded.replaceOne(clientSession, filter, document);
    }

    @Override
    public UpdateResult replaceOne(Bson filter, T document, ReplaceOptions replaceOptions) {
        return guarded.replaceOne(filter, document, replaceOptions);
    }

    @Override
    public UpdateResult replaceOne(Bson filter, T document) {
        return guarded.replaceOne(filter, document);
    }

    @Override
    public UpdateResult updateMany(
            ClientSession clientSession, Bson filter, List<? extends Bson> list, UpdateOptions updateOptions) {
        return guarded.updateMany(clientSession, filter, list, updateOptions);
    }

    @Override
    public UpdateResult updateMany(ClientSession clientSession, Bson filter, List<? extends Bson> list) {
        return guarded.updateMany(clientSession, filter, list);
    }

    @Override
    public UpdateResult updateMany(
            ClientSession clientSession, Bson filter1, Bson update2, UpdateOptions updateOptions) {
        return guarded.updateMany(clientSession, filter1, update2, updateOptions);
    }

    @Override
    public UpdateResult updateMany(ClientSession clientSession, Bson filter1, Bson update2) {
        return guarded.updateMany(clientSession, filter1, update2);
    }

    @Override
    public UpdateResult updateMany(Bson filter, List<? extends Bson> list, UpdateOptions updateOptions) {
        return guarded.updateMany(filter, list, updateOptions);
    }

    @Override
    public UpdateResult updateMany(Bson filter, List<? extends Bson> list) {
        return guarded.updateMany(filter, list);
    }

    @Override
    public UpdateResult updateMany(Bson filter0, Bson update1, UpdateOptions updateOptions) {
        return guarded.updateMany(filter0, update1, updateOptions);
    }

    @Override
    public UpdateResult updateMany(Bson filter0, Bson update1) {
        return guarded.updateMany(filter0, update1);
    }

    @Override
    public UpdateResult updateOne(
            ClientSession clientSession, Bson filter, List<? extends Bson> list, UpdateOptions updateOptions) {
        return guarded.updateOne(clientSession, filter, list, updateOptions);
    }

    @Override
    public UpdateResult updateOne(ClientSession clientSession, Bson filter, List<? extends Bson> list) {
        return guarded.updateOne(clientSession, filter, list);
    }

    @Override
    public UpdateResult updateOne(
            ClientSession clientSession, Bson filter1, Bson update2, UpdateOptions updateOptions) {
        return guarded.updateOne(clientSession, filter1, update2, updateOptions);
    }

    @Override
    public UpdateResult updateOne(ClientSession clientSession, Bson filter1, Bson update2) {
        return guarded.updateOne(clientSession, filter1, update2);
    }

    @Override
    public UpdateResult updateOne(Bson filter, List<? extends Bson> list, UpdateOptions updateOptions) {
        return guarded.updateOne(filter, list, updateOptions);
    }

    @Override
    public UpdateResult updateOne(Bson filter, List<? extends Bson> list) {
        return guarded.updateOne(filter, list);
    }

    @Override
    public UpdateResult updateOne(Bson filter0, Bson update1, UpdateOptions updateOptions) {
        return guarded.updateOne(filter0, update1, updateOptions);
    }

    @Override
    public UpdateResult updateOne(Bson filter0, Bson update1) {
        return guarded.updateOne(filter0, update1);
    }

    @Override
    public void updateSearchIndex(String string, Bson update) {
        collection.updateSearchIndex(string, update);
    }

    @Override
    public ChangeStreamIterable<T> watch() {
        return collection.watch();
    }

    @Override
    public <TResult> ChangeStreamIterable<TResult> watch(Class<TResult> resultClass) {
        return collection.watch(resultClass);
    }

    @Override
    public <TResult> ChangeStreamIterable<TResult> watch(ClientSession clientSession, Class<TResult> resultClass) {
        return collection.watch(clientSession, resultClass);
    }

    @Override
    public <TResult> ChangeStreamIterable<TResult> watch(
            ClientSession clientSession, List<? extends Bson> list, Class<TResult> resultClass) {
        return collection.watch(clientSession, list, resultClass);
    }

    @Override
    public ChangeStreamIterable<T> watch(ClientSession clientSession, List<? extends Bson> list) {
        return collection.watch(clientSession, list);
    }

    @Override
    public ChangeStreamIterable<T> watch(ClientSession clientSession) {
        return collection.watch(clientSession);
    }

    @Override
    public <TResult> ChangeStreamIterable<TResult> watch(List<? extends Bson> list, Class<TResult> resultClass) {
        return collection.watch(list, resultClass);
    }

    @Override
    public ChangeStreamIterable<T> watch(List<? extends Bson> list) {
        return collection.watch(list);
    }

    @Override
    public MongoCollection<T> withCodecRegistry(CodecRegistry codecRegistry) {
        return rewrap(collection.withCodecRegistry(codecRegistry));
    }

    @Override
    public <NewTDocument> MongoCollection<NewTDocument> withDocumentClass(Class<NewTDocument> resultClass) {
        return rewrap(collection.withDocumentClass(resultClass));
    }

    @Override
    public MongoCollection<T> withReadConcern(ReadConcern readConcern) {
        return rewrap(collection.withReadConcern(readConcern));
    }

    @Override
    public MongoCollection<T> withReadPreference(ReadPreference readPreference) {
        return rewrap(collection.withReadPreference(readPreference));
    }

    @Override
    public MongoCollection<T> withTimeout(long amount, TimeUnit timeUnit) {
        return rewrap(collection.withTimeout(amount, timeUnit));
    }

    @Override
    public MongoCollection<T> withWriteConcern(WriteConcern writeConcern) {
        return rewrap(collection.withWriteConcern(writeConcern));
    }
}
