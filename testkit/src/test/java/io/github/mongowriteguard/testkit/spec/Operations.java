package io.github.mongowriteguard.testkit.spec;

import com.mongodb.client.ClientSession;
import com.mongodb.client.ListDatabasesIterable;
import com.mongodb.client.MongoChangeStreamCursor;
import com.mongodb.client.MongoCluster;
import com.mongodb.client.MongoCollection;
import com.mongodb.client.MongoDatabase;
import com.mongodb.client.MongoIterable;
import com.mongodb.client.model.BulkWriteOptions;
import com.mongodb.client.model.DeleteManyModel;
import com.mongodb.client.model.DeleteOneModel;
import com.mongodb.client.model.FindOneAndDeleteOptions;
import com.mongodb.client.model.FindOneAndReplaceOptions;
import com.mongodb.client.model.FindOneAndUpdateOptions;
import com.mongodb.client.model.IndexOptions;
import com.mongodb.client.model.InsertManyOptions;
import com.mongodb.client.model.InsertOneModel;
import com.mongodb.client.model.ReplaceOneModel;
import com.mongodb.client.model.ReplaceOptions;
import com.mongodb.client.model.ReturnDocument;
import com.mongodb.client.model.UpdateManyModel;
import com.mongodb.client.model.UpdateOneModel;
import com.mongodb.client.model.UpdateOptions;
import com.mongodb.client.model.WriteModel;
import com.mongodb.client.model.changestream.ChangeStreamDocument;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.bson.BsonArray;
import org.bson.BsonDocument;
import org.bson.BsonInt64;
import org.bson.BsonNull;
import org.bson.BsonString;
import org.bson.BsonValue;
import org.opentest4j.TestAbortedException;

/**
 * The operations of the unified format on client, database and collection entities, run through the real
 * driver's public API. A result is returned as the BSON value the format's {@code expectResult} describes
 * (null when the operation has none). Operations the Java driver has no helper for ({@code count},
 * {@code listIndexNames}, ...) and arguments this class does not read make the test skipped.
 */
final class Operations {
    private final Entities entities;

    Operations(Entities entities) {
        this.entities = entities;
    }

    /** Runs {@code operation} on its entity: a BSON value, a {@link ChangeStreamValue} or null; driver exceptions propagate. */
    Object run(BsonDocument operation) {
        String name = operation.getString("name").getValue();
        String object = operation.getString("object").getValue();
        Arguments args = new Arguments(name, operation.getDocument("arguments", new BsonDocument()));
        switch (entities.kind(object)) {
            case "client":
                return onClient(name, cluster(entities.client(object), args), args);
            case "database":
                return onDatabase(name, database(entities.database(object), args), args);
            case "collection":
                return onCollection(name, collection(entities.collection(object), args), args);
            default:
                throw unsupported(name + " on a " + entities.kind(object) + " entity");
        }
    }

    static TestAbortedException unsupported(String what) {
        return new TestAbortedException(what + " is not supported by the runner");
    }

    private static MongoCluster cluster(MongoCluster cluster, Arguments args) {
        return args.has("timeoutMS")
                ? cluster.withTimeout(args.get("timeoutMS").asNumber().longValue(), TimeUnit.MILLISECONDS)
                : cluster;
    }

    private static MongoDatabase database(MongoDatabase database, Arguments args) {
        return args.has("timeoutMS")
                ? database.withTimeout(args.get("timeoutMS").asNumber().longValue(), TimeUnit.MILLISECONDS)
                : database;
    }

    private static MongoCollection<BsonDocument> collection(MongoCollection<BsonDocument> collection, Arguments args) {
        return args.has("timeoutMS")
                ? collection.withTimeout(args.get("timeoutMS").asNumber().longValue(), TimeUnit.MILLISECONDS)
                : collection;
    }

    private ClientSession session(Arguments args) {
        return args.has("session") ? entities.session(args.string("session")) : null;
    }

    // ---- client ------------------------------------------------------------------------------------------

    private Object onClient(String name, MongoCluster cluster, Arguments args) {
        ClientSession session = session(args);
        switch (name) {
            case "listDatabases": {
                ListDatabasesIterable<BsonDocument> iterable = session == null
                        ? cluster.listDatabases(BsonDocument.class)
                        : cluster.listDatabases(session, BsonDocument.class);
                if (args.has("filter")) {
                    iterable = iterable.filter(args.document("filter"));
                }
                args.requireAllRead();
                return array(iterable);
            }
            case "listDatabaseNames": {
                if (args.has("filter")) {
                    throw unsupported("listDatabaseNames with a filter (the Java driver's helper takes none)");
                }
                args.requireAllRead();
                return strings(session == null ? cluster.listDatabaseNames() : cluster.listDatabaseNames(session));
            }
            case "createChangeStream": {
                List<BsonDocument> pipeline = pipeline(args);
                args.requireAllRead();
                return changeStream(
                        session == null
                                ? cluster.watch(pipeline, BsonDocument.class).cursor()
                                : cluster.watch(session, pipeline, BsonDocument.class)
                                        .cursor());
            }
            default:
                throw unsupported("client operation " + name);
        }
    }

    // ---- database ----------------------------------------------------------------------------------------

    private Object onDatabase(String name, MongoDatabase database, Arguments args) {
        ClientSession session = session(args);
        switch (name) {
            case "aggregate": {
                List<BsonDocument> pipeline = pipeline(args);
                args.requireAllRead();
                return array(
                        session == null
                                ? database.aggregate(pipeline, BsonDocument.class)
                                : database.aggregate(session, pipeline, BsonDocument.class));
            }
            case "listCollections": {
                var iterable = session == null
                        ? database.listCollections(BsonDocument.class)
                        : database.listCollections(session, BsonDocument.class);
                if (args.has("filter")) {
                    iterable = iterable.filter(args.document("filter"));
                }
                args.requireAllRead();
                return array(iterable);
            }
            case "listCollectionNames": {
                var iterable = session == null ? database.listCollectionNames() : database.listCollectionNames(session);
                if (args.has("filter")) {
                    iterable = iterable.filter(args.document("filter"));
                }
                args.requireAllRead();
                return strings(iterable);
            }
            case "createChangeStream": {
                List<BsonDocument> pipeline = pipeline(args);
                args.requireAllRead();
                return changeStream(
                        session == null
                                ? database.watch(pipeline, BsonDocument.class).cursor()
                                : database.watch(session, pipeline, BsonDocument.class)
                                        .cursor());
            }
            case "runCommand": {
                BsonDocument command = args.document("command");
                args.has("commandName");
                if (args.has("readPreference")) {
                    database = database.withReadPreference(Entities.readPreference(args.document("readPreference")));
                }
                args.requireAllRead();
                return session == null
                        ? database.runCommand(command, BsonDocument.class)
                        : database.runCommand(session, command, BsonDocument.class);
            }
            case "createCollection": {
                String collection = args.string("collection");
                args.requireAllRead();
                if (session == null) {
                    database.createCollection(collection);
                } else {
                    database.createCollection(session, collection);
                }
                return null;
            }
            case "dropCollection": {
                String collection = args.string("collection");
                args.requireAllRead();
                if (session == null) {
                    database.getCollection(collection).drop();
                } else {
                    database.getCollection(collection).drop(session);
                }
                return null;
            }
            default:
                throw unsupported("database operation " + name);
        }
    }

    // ---- collection --------------------------------------------------------------------------------------

    private Object onCollection(String name, MongoCollection<BsonDocument> collection, Arguments args) {
        ClientSession session = session(args);
        switch (name) {
            case "insertOne": {
                BsonDocument document = args.document("document");
                args.requireAllRead();
                var result = session == null ? collection.insertOne(document) : collection.insertOne(session, document);
                return result.wasAcknowledged()
                        ? new BsonDocument("insertedId", result.getInsertedId())
                        : new BsonDocument();
            }
            case "insertMany": {
                List<BsonDocument> documents = documents(args.get("documents").asArray());
                InsertManyOptions options = new InsertManyOptions();
                if (args.has("ordered")) {
                    options.ordered(args.get("ordered").asBoolean().getValue());
                }
                args.requireAllRead();
                var result = session == null
                        ? collection.insertMany(documents, options)
                        : collection.insertMany(session, documents, options);
                if (!result.wasAcknowledged()) {
                    return new BsonDocument();
                }
                BsonDocument ids = new BsonDocument();
                result.getInsertedIds().forEach((index, id) -> ids.put(Integer.toString(index), id));
                return new BsonDocument("insertedIds", ids);
            }
            case "updateOne":
            case "updateMany": {
                BsonDocument filter = args.document("filter");
                BsonValue update = args.get("update");
                UpdateOptions options = updateOptions(args);
                args.requireAllRead();
                boolean one = name.equals("updateOne");
                var result = update.isArray()
                        ? (one
                                ? (session == null
                                        ? collection.updateOne(filter, documents(update.asArray()), options)
                                        : collection.updateOne(session, filter, documents(update.asArray()), options))
                                : (session == null
                                        ? collection.updateMany(filter, documents(update.asArray()), options)
                                        : collection.updateMany(session, filter, documents(update.asArray()), options)))
                        : (one
                                ? (session == null
                                        ? collection.updateOne(filter, update.asDocument(), options)
                                        : collection.updateOne(session, filter, update.asDocument(), options))
                                : (session == null
                                        ? collection.updateMany(filter, update.asDocument(), options)
                                        : collection.updateMany(session, filter, update.asDocument(), options)));
                return Results.update(result);
            }
            case "replaceOne": {
                BsonDocument filter = args.document("filter");
                BsonDocument replacement = args.document("replacement");
                ReplaceOptions options = new ReplaceOptions();
                if (args.has("upsert")) {
                    options.upsert(args.get("upsert").asBoolean().getValue());
                }
                args.requireAllRead();
                return Results.update(
                        session == null
                                ? collection.replaceOne(filter, replacement, options)
                                : collection.replaceOne(session, filter, replacement, options));
            }
            case "deleteOne":
            case "deleteMany": {
                BsonDocument filter = args.document("filter");
                args.requireAllRead();
                boolean one = name.equals("deleteOne");
                var result = one
                        ? (session == null ? collection.deleteOne(filter) : collection.deleteOne(session, filter))
                        : (session == null ? collection.deleteMany(filter) : collection.deleteMany(session, filter));
                return result.wasAcknowledged()
                        ? new BsonDocument("deletedCount", new BsonInt64(result.getDeletedCount()))
                        : new BsonDocument();
            }
            case "bulkWrite": {
                List<WriteModel<BsonDocument>> requests = new ArrayList<>();
                args.get("requests").asArray().forEach(request -> requests.add(writeModel(request.asDocument())));
                BulkWriteOptions options = new BulkWriteOptions();
                if (args.has("ordered")) {
                    options.ordered(args.get("ordered").asBoolean().getValue());
                }
                args.requireAllRead();
                return Results.bulkWrite(
                        session == null
                                ? collection.bulkWrite(requests, options)
                                : collection.bulkWrite(session, requests, options));
            }
            case "findOneAndUpdate": {
                BsonDocument filter = args.document("filter");
                BsonValue update = args.get("update");
                FindOneAndUpdateOptions options = new FindOneAndUpdateOptions();
                if (args.has("returnDocument")) {
                    options.returnDocument(returnDocument(args.string("returnDocument")));
                }
                if (args.has("upsert")) {
                    options.upsert(args.get("upsert").asBoolean().getValue());
                }
                if (args.has("sort")) {
                    options.sort(args.document("sort"));
                }
                if (args.has("projection")) {
                    options.projection(args.document("projection"));
                }
                args.requireAllRead();
                BsonDocument result = update.isArray()
                        ? (session == null
                                ? collection.findOneAndUpdate(filter, documents(update.asArray()), options)
                                : collection.findOneAndUpdate(session, filter, documents(update.asArray()), options))
                        : (session == null
                                ? collection.findOneAndUpdate(filter, update.asDocument(), options)
                                : collection.findOneAndUpdate(session, filter, update.asDocument(), options));
                return result == null ? BsonNull.VALUE : result;
            }
            case "findOneAndReplace": {
                BsonDocument filter = args.document("filter");
                BsonDocument replacement = args.document("replacement");
                FindOneAndReplaceOptions options = new FindOneAndReplaceOptions();
                if (args.has("returnDocument")) {
                    options.returnDocument(returnDocument(args.string("returnDocument")));
                }
                if (args.has("upsert")) {
                    options.upsert(args.get("upsert").asBoolean().getValue());
                }
                if (args.has("sort")) {
                    options.sort(args.document("sort"));
                }
                if (args.has("projection")) {
                    options.projection(args.document("projection"));
                }
                args.requireAllRead();
                BsonDocument result = session == null
                        ? collection.findOneAndReplace(filter, replacement, options)
                        : collection.findOneAndReplace(session, filter, replacement, options);
                return result == null ? BsonNull.VALUE : result;
            }
            case "findOneAndDelete": {
                BsonDocument filter = args.document("filter");
                FindOneAndDeleteOptions options = new FindOneAndDeleteOptions();
                if (args.has("sort")) {
                    options.sort(args.document("sort"));
                }
                if (args.has("projection")) {
                    options.projection(args.document("projection"));
                }
                args.requireAllRead();
                BsonDocument result = session == null
                        ? collection.findOneAndDelete(filter, options)
                        : collection.findOneAndDelete(session, filter, options);
                return result == null ? BsonNull.VALUE : result;
            }
            case "find":
            case "findOne": {
                var iterable = session == null
                        ? collection.find(args.document("filter", new BsonDocument()))
                        : collection.find(session, args.document("filter", new BsonDocument()));
                if (args.has("sort")) {
                    iterable = iterable.sort(args.document("sort"));
                }
                if (args.has("projection")) {
                    iterable = iterable.projection(args.document("projection"));
                }
                if (args.has("skip")) {
                    iterable = iterable.skip(args.get("skip").asNumber().intValue());
                }
                if (args.has("limit")) {
                    iterable = iterable.limit(args.get("limit").asNumber().intValue());
                }
                if (args.has("batchSize")) {
                    iterable =
                            iterable.batchSize(args.get("batchSize").asNumber().intValue());
                }
                args.requireAllRead();
                if (name.equals("findOne")) {
                    BsonDocument first = iterable.first();
                    return first == null ? BsonNull.VALUE : first;
                }
                return array(iterable);
            }
            case "aggregate": {
                List<BsonDocument> pipeline = pipeline(args);
                var iterable =
                        session == null ? collection.aggregate(pipeline) : collection.aggregate(session, pipeline);
                if (args.has("batchSize")) {
                    iterable =
                            iterable.batchSize(args.get("batchSize").asNumber().intValue());
                }
                args.requireAllRead();
                return array(iterable);
            }
            case "countDocuments": {
                BsonDocument filter = args.document("filter");
                args.requireAllRead();
                return new BsonInt64(
                        session == null
                                ? collection.countDocuments(filter)
                                : collection.countDocuments(session, filter));
            }
            case "estimatedDocumentCount": {
                args.requireAllRead();
                return new BsonInt64(collection.estimatedDocumentCount());
            }
            case "distinct": {
                String field = args.string("fieldName");
                BsonDocument filter = args.document("filter", new BsonDocument());
                args.requireAllRead();
                var iterable = session == null
                        ? collection.distinct(field, BsonValue.class)
                        : collection.distinct(session, field, BsonValue.class);
                BsonArray values = new BsonArray();
                iterable.filter(filter).forEach(values::add);
                return values;
            }
            case "listIndexes": {
                args.requireAllRead();
                return array(
                        session == null
                                ? collection.listIndexes(BsonDocument.class)
                                : collection.listIndexes(session, BsonDocument.class));
            }
            case "createIndex": {
                BsonDocument keys = args.document("keys");
                IndexOptions options = new IndexOptions();
                if (args.has("name")) {
                    options.name(args.string("name"));
                }
                if (args.has("unique")) {
                    options.unique(args.get("unique").asBoolean().getValue());
                }
                args.requireAllRead();
                return new BsonString(
                        session == null
                                ? collection.createIndex(keys, options)
                                : collection.createIndex(session, keys, options));
            }
            case "dropIndex": {
                String index = args.string("name");
                args.requireAllRead();
                if (session == null) {
                    collection.dropIndex(index);
                } else {
                    collection.dropIndex(session, index);
                }
                return null;
            }
            case "dropIndexes": {
                args.requireAllRead();
                if (session == null) {
                    collection.dropIndexes();
                } else {
                    collection.dropIndexes(session);
                }
                return null;
            }
            case "createChangeStream": {
                List<BsonDocument> pipeline = pipeline(args);
                args.requireAllRead();
                return changeStream(
                        session == null
                                ? collection.watch(pipeline, BsonDocument.class).cursor()
                                : collection
                                        .watch(session, pipeline, BsonDocument.class)
                                        .cursor());
            }
            case "count":
                throw unsupported(
                        "count (the Java driver has no count helper since 4.0; countDocuments/estimatedDocumentCount replace it)");
            case "listIndexNames":
                throw unsupported("listIndexNames (the Java driver has no such helper)");
            default:
                throw unsupported("collection operation " + name);
        }
    }

    // ---- helpers -----------------------------------------------------------------------------------------

    /** A change stream is returned as a cursor the runner may save with {@code saveResultAsEntity} (else closes). */
    private static Object changeStream(MongoChangeStreamCursor<ChangeStreamDocument<BsonDocument>> cursor) {
        return new ChangeStreamValue(cursor);
    }

    private static UpdateOptions updateOptions(Arguments args) {
        UpdateOptions options = new UpdateOptions();
        if (args.has("upsert")) {
            options.upsert(args.get("upsert").asBoolean().getValue());
        }
        if (args.has("arrayFilters")) {
            options.arrayFilters(documents(args.get("arrayFilters").asArray()));
        }
        return options;
    }

    private static ReturnDocument returnDocument(String value) {
        return value.equalsIgnoreCase("after") ? ReturnDocument.AFTER : ReturnDocument.BEFORE;
    }

    private static List<BsonDocument> pipeline(Arguments args) {
        return documents(args.get("pipeline").asArray());
    }

    private static List<BsonDocument> documents(BsonArray array) {
        List<BsonDocument> documents = new ArrayList<>();
        array.forEach(value -> documents.add(value.asDocument()));
        return documents;
    }

    private static BsonArray array(MongoIterable<BsonDocument> iterable) {
        BsonArray array = new BsonArray();
        iterable.forEach(array::add);
        return array;
    }

    private static BsonArray strings(MongoIterable<String> iterable) {
        BsonArray array = new BsonArray();
        iterable.forEach(name -> array.add(new BsonString(name)));
        return array;
    }

    private static WriteModel<BsonDocument> writeModel(BsonDocument request) {
        String type = request.getFirstKey();
        Arguments args = new Arguments("bulkWrite " + type, request.getDocument(type));
        WriteModel<BsonDocument> model;
        switch (type) {
            case "insertOne":
                model = new InsertOneModel<>(args.document("document"));
                break;
            case "updateOne":
            case "updateMany": {
                BsonDocument filter = args.document("filter");
                BsonValue update = args.get("update");
                UpdateOptions options = updateOptions(args);
                boolean one = type.equals("updateOne");
                model = update.isArray()
                        ? (one
                                ? new UpdateOneModel<>(filter, documents(update.asArray()), options)
                                : new UpdateManyModel<>(filter, documents(update.asArray()), options))
                        : (one
                                ? new UpdateOneModel<>(filter, update.asDocument(), options)
                                : new UpdateManyModel<>(filter, update.asDocument(), options));
                break;
            }
            case "replaceOne": {
                ReplaceOptions options = new ReplaceOptions();
                BsonDocument filter = args.document("filter");
                BsonDocument replacement = args.document("replacement");
                if (args.has("upsert")) {
                    options.upsert(args.get("upsert").asBoolean().getValue());
                }
                model = new ReplaceOneModel<>(filter, replacement, options);
                break;
            }
            case "deleteOne":
                model = new DeleteOneModel<>(args.document("filter"));
                break;
            case "deleteMany":
                model = new DeleteManyModel<>(args.document("filter"));
                break;
            default:
                throw unsupported("bulkWrite request " + type);
        }
        args.requireAllRead();
        return model;
    }
}
