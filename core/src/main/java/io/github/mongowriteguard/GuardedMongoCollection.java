package io.github.mongowriteguard;

import com.mongodb.ReadConcern;
import com.mongodb.ReadPreference;
import com.mongodb.WriteConcern;
import com.mongodb.bulk.BulkWriteResult;
import com.mongodb.client.ClientSession;
import com.mongodb.client.MongoCollection;
import com.mongodb.client.model.BulkWriteOptions;
import com.mongodb.client.model.DeleteOptions;
import com.mongodb.client.model.FindOneAndDeleteOptions;
import com.mongodb.client.model.FindOneAndReplaceOptions;
import com.mongodb.client.model.FindOneAndUpdateOptions;
import com.mongodb.client.model.InsertManyOptions;
import com.mongodb.client.model.InsertOneOptions;
import com.mongodb.client.model.ReplaceOptions;
import com.mongodb.client.model.UpdateOptions;
import com.mongodb.client.model.WriteModel;
import com.mongodb.client.result.DeleteResult;
import com.mongodb.client.result.InsertManyResult;
import com.mongodb.client.result.InsertOneResult;
import com.mongodb.client.result.UpdateResult;
import java.util.List;
import java.util.concurrent.TimeUnit;
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
 * MongoCollection<Document> orders = guard.guardCollection(client, client.getDatabase("shop").getCollection("orders")).asMongoCollection();
 * orders.updateOne(eq("_id", 42), set("state", "paid"));   // guarded: server deadline, same-copy retries
 * orders.find(eq("state", "paid"));                        // the driver's own read
 * }</pre>
 *
 * <p>Its write methods throw what {@link GuardedCollection}'s do (see the README's table of deliberate differences);
 * {@code withTimeout} is refused, as {@code WriteGuard.guardCollection} refuses a collection with a timeout.
 *
 * @param <T> the collection's document class
 */
final class GuardedMongoCollection<T> extends ForwardingMongoCollection<T> {
    private final GuardedCollection<T> guarded;
    private final GuardedCollection.Rewrap rewrap;

    GuardedMongoCollection(
            MongoCollection<T> collection, GuardedCollection<T> guarded, GuardedCollection.Rewrap rewrap) {
        super(collection);
        this.guarded = guarded;
        this.rewrap = rewrap;
    }

    private <X> MongoCollection<X> rewrap(MongoCollection<X> changed) {
        return rewrap.wrap(changed).asMongoCollection();
    }

    @Override
    public String toString() {
        return "GuardedMongoCollection{" + delegate().getNamespace() + '}';
    }

    // The write methods: through the guard.

    @Override
    public BulkWriteResult bulkWrite(List<? extends WriteModel<? extends T>> requests) {
        return guarded.bulkWrite(requests);
    }

    @Override
    public BulkWriteResult bulkWrite(List<? extends WriteModel<? extends T>> requests, BulkWriteOptions options) {
        return guarded.bulkWrite(requests, options);
    }

    @Override
    public BulkWriteResult bulkWrite(ClientSession clientSession, List<? extends WriteModel<? extends T>> requests) {
        return guarded.bulkWrite(clientSession, requests);
    }

    @Override
    public BulkWriteResult bulkWrite(
            ClientSession clientSession, List<? extends WriteModel<? extends T>> requests, BulkWriteOptions options) {
        return guarded.bulkWrite(clientSession, requests, options);
    }

    @Override
    public InsertOneResult insertOne(T document) {
        return guarded.insertOne(document);
    }

    @Override
    public InsertOneResult insertOne(T document, InsertOneOptions options) {
        return guarded.insertOne(document, options);
    }

    @Override
    public InsertOneResult insertOne(ClientSession clientSession, T document) {
        return guarded.insertOne(clientSession, document);
    }

    @Override
    public InsertOneResult insertOne(ClientSession clientSession, T document, InsertOneOptions options) {
        return guarded.insertOne(clientSession, document, options);
    }

    @Override
    public InsertManyResult insertMany(List<? extends T> documents) {
        return guarded.insertMany(documents);
    }

    @Override
    public InsertManyResult insertMany(List<? extends T> documents, InsertManyOptions options) {
        return guarded.insertMany(documents, options);
    }

    @Override
    public InsertManyResult insertMany(ClientSession clientSession, List<? extends T> documents) {
        return guarded.insertMany(clientSession, documents);
    }

    @Override
    public InsertManyResult insertMany(
            ClientSession clientSession, List<? extends T> documents, InsertManyOptions options) {
        return guarded.insertMany(clientSession, documents, options);
    }

    @Override
    public DeleteResult deleteOne(Bson filter) {
        return guarded.deleteOne(filter);
    }

    @Override
    public DeleteResult deleteOne(Bson filter, DeleteOptions options) {
        return guarded.deleteOne(filter, options);
    }

    @Override
    public DeleteResult deleteOne(ClientSession clientSession, Bson filter) {
        return guarded.deleteOne(clientSession, filter);
    }

    @Override
    public DeleteResult deleteOne(ClientSession clientSession, Bson filter, DeleteOptions options) {
        return guarded.deleteOne(clientSession, filter, options);
    }

    @Override
    public DeleteResult deleteMany(Bson filter) {
        return guarded.deleteMany(filter);
    }

    @Override
    public DeleteResult deleteMany(Bson filter, DeleteOptions options) {
        return guarded.deleteMany(filter, options);
    }

    @Override
    public DeleteResult deleteMany(ClientSession clientSession, Bson filter) {
        return guarded.deleteMany(clientSession, filter);
    }

    @Override
    public DeleteResult deleteMany(ClientSession clientSession, Bson filter, DeleteOptions options) {
        return guarded.deleteMany(clientSession, filter, options);
    }

    @Override
    public UpdateResult replaceOne(Bson filter, T replacement) {
        return guarded.replaceOne(filter, replacement);
    }

    @Override
    public UpdateResult replaceOne(Bson filter, T replacement, ReplaceOptions replaceOptions) {
        return guarded.replaceOne(filter, replacement, replaceOptions);
    }

    @Override
    public UpdateResult replaceOne(ClientSession clientSession, Bson filter, T replacement) {
        return guarded.replaceOne(clientSession, filter, replacement);
    }

    @Override
    public UpdateResult replaceOne(
            ClientSession clientSession, Bson filter, T replacement, ReplaceOptions replaceOptions) {
        return guarded.replaceOne(clientSession, filter, replacement, replaceOptions);
    }

    @Override
    public UpdateResult updateOne(Bson filter, Bson update) {
        return guarded.updateOne(filter, update);
    }

    @Override
    public UpdateResult updateOne(Bson filter, Bson update, UpdateOptions updateOptions) {
        return guarded.updateOne(filter, update, updateOptions);
    }

    @Override
    public UpdateResult updateOne(ClientSession clientSession, Bson filter, Bson update) {
        return guarded.updateOne(clientSession, filter, update);
    }

    @Override
    public UpdateResult updateOne(ClientSession clientSession, Bson filter, Bson update, UpdateOptions updateOptions) {
        return guarded.updateOne(clientSession, filter, update, updateOptions);
    }

    @Override
    public UpdateResult updateOne(Bson filter, List<? extends Bson> update) {
        return guarded.updateOne(filter, update);
    }

    @Override
    public UpdateResult updateOne(Bson filter, List<? extends Bson> update, UpdateOptions updateOptions) {
        return guarded.updateOne(filter, update, updateOptions);
    }

    @Override
    public UpdateResult updateOne(ClientSession clientSession, Bson filter, List<? extends Bson> update) {
        return guarded.updateOne(clientSession, filter, update);
    }

    @Override
    public UpdateResult updateOne(
            ClientSession clientSession, Bson filter, List<? extends Bson> update, UpdateOptions updateOptions) {
        return guarded.updateOne(clientSession, filter, update, updateOptions);
    }

    @Override
    public UpdateResult updateMany(Bson filter, Bson update) {
        return guarded.updateMany(filter, update);
    }

    @Override
    public UpdateResult updateMany(Bson filter, Bson update, UpdateOptions updateOptions) {
        return guarded.updateMany(filter, update, updateOptions);
    }

    @Override
    public UpdateResult updateMany(ClientSession clientSession, Bson filter, Bson update) {
        return guarded.updateMany(clientSession, filter, update);
    }

    @Override
    public UpdateResult updateMany(ClientSession clientSession, Bson filter, Bson update, UpdateOptions updateOptions) {
        return guarded.updateMany(clientSession, filter, update, updateOptions);
    }

    @Override
    public UpdateResult updateMany(Bson filter, List<? extends Bson> update) {
        return guarded.updateMany(filter, update);
    }

    @Override
    public UpdateResult updateMany(Bson filter, List<? extends Bson> update, UpdateOptions updateOptions) {
        return guarded.updateMany(filter, update, updateOptions);
    }

    @Override
    public UpdateResult updateMany(ClientSession clientSession, Bson filter, List<? extends Bson> update) {
        return guarded.updateMany(clientSession, filter, update);
    }

    @Override
    public UpdateResult updateMany(
            ClientSession clientSession, Bson filter, List<? extends Bson> update, UpdateOptions updateOptions) {
        return guarded.updateMany(clientSession, filter, update, updateOptions);
    }

    @Override
    public @Nullable T findOneAndDelete(Bson filter) {
        return guarded.findOneAndDelete(filter);
    }

    @Override
    public @Nullable T findOneAndDelete(Bson filter, FindOneAndDeleteOptions options) {
        return guarded.findOneAndDelete(filter, options);
    }

    @Override
    public @Nullable T findOneAndDelete(ClientSession clientSession, Bson filter) {
        return guarded.findOneAndDelete(clientSession, filter);
    }

    @Override
    public @Nullable T findOneAndDelete(ClientSession clientSession, Bson filter, FindOneAndDeleteOptions options) {
        return guarded.findOneAndDelete(clientSession, filter, options);
    }

    @Override
    public @Nullable T findOneAndReplace(Bson filter, T replacement) {
        return guarded.findOneAndReplace(filter, replacement);
    }

    @Override
    public @Nullable T findOneAndReplace(Bson filter, T replacement, FindOneAndReplaceOptions options) {
        return guarded.findOneAndReplace(filter, replacement, options);
    }

    @Override
    public @Nullable T findOneAndReplace(ClientSession clientSession, Bson filter, T replacement) {
        return guarded.findOneAndReplace(clientSession, filter, replacement);
    }

    @Override
    public @Nullable T findOneAndReplace(
            ClientSession clientSession, Bson filter, T replacement, FindOneAndReplaceOptions options) {
        return guarded.findOneAndReplace(clientSession, filter, replacement, options);
    }

    @Override
    public @Nullable T findOneAndUpdate(Bson filter, Bson update) {
        return guarded.findOneAndUpdate(filter, update);
    }

    @Override
    public @Nullable T findOneAndUpdate(Bson filter, Bson update, FindOneAndUpdateOptions options) {
        return guarded.findOneAndUpdate(filter, update, options);
    }

    @Override
    public @Nullable T findOneAndUpdate(ClientSession clientSession, Bson filter, Bson update) {
        return guarded.findOneAndUpdate(clientSession, filter, update);
    }

    @Override
    public @Nullable T findOneAndUpdate(
            ClientSession clientSession, Bson filter, Bson update, FindOneAndUpdateOptions options) {
        return guarded.findOneAndUpdate(clientSession, filter, update, options);
    }

    @Override
    public @Nullable T findOneAndUpdate(Bson filter, List<? extends Bson> update) {
        return guarded.findOneAndUpdate(filter, update);
    }

    @Override
    public @Nullable T findOneAndUpdate(Bson filter, List<? extends Bson> update, FindOneAndUpdateOptions options) {
        return guarded.findOneAndUpdate(filter, update, options);
    }

    @Override
    public @Nullable T findOneAndUpdate(ClientSession clientSession, Bson filter, List<? extends Bson> update) {
        return guarded.findOneAndUpdate(clientSession, filter, update);
    }

    @Override
    public @Nullable T findOneAndUpdate(
            ClientSession clientSession, Bson filter, List<? extends Bson> update, FindOneAndUpdateOptions options) {
        return guarded.findOneAndUpdate(clientSession, filter, update, options);
    }

    // The withX methods: a guarded view of the changed collection.

    @Override
    public <NewTDocument> MongoCollection<NewTDocument> withDocumentClass(Class<NewTDocument> clazz) {
        return rewrap(delegate().withDocumentClass(clazz));
    }

    @Override
    public MongoCollection<T> withCodecRegistry(CodecRegistry codecRegistry) {
        return rewrap(delegate().withCodecRegistry(codecRegistry));
    }

    @Override
    public MongoCollection<T> withReadPreference(ReadPreference readPreference) {
        return rewrap(delegate().withReadPreference(readPreference));
    }

    @Override
    public MongoCollection<T> withWriteConcern(WriteConcern writeConcern) {
        return rewrap(delegate().withWriteConcern(writeConcern));
    }

    @Override
    public MongoCollection<T> withReadConcern(ReadConcern readConcern) {
        return rewrap(delegate().withReadConcern(readConcern));
    }

    @Override
    public MongoCollection<T> withTimeout(long timeout, TimeUnit timeUnit) {
        return rewrap(delegate().withTimeout(timeout, timeUnit));
    }
}
