package io.github.mongowriteguard.benchmarks.lab;

import com.mongodb.ConnectionString;
import com.mongodb.MongoClientSettings;
import com.mongodb.MongoCommandException;
import com.mongodb.client.MongoClient;
import com.mongodb.client.MongoClients;
import com.mongodb.client.MongoCollection;
import com.mongodb.client.MongoDatabase;
import com.mongodb.client.model.BulkWriteOptions;
import io.github.mongowriteguard.GuardedCollection;
import io.github.mongowriteguard.WriteGuard;
import io.github.mongowriteguard.spring.data.GuardedMongoTemplate;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import org.bson.Document;
import org.springframework.data.mongodb.core.BulkOperations;
import org.springframework.data.mongodb.core.FindAndReplaceOptions;
import org.springframework.data.mongodb.core.MongoTemplate;
import org.springframework.data.mongodb.core.query.Criteria;
import org.springframework.data.mongodb.core.query.Query;
import org.springframework.data.mongodb.core.query.Update;

/**
 * The ways the lab writes one bulk: the driver ORDERED and UNORDERED, Spring Data's {@code bulkOps(ORDERED)} of
 * upserting {@code replaceOne}s, the guard, and Spring Data's most common bulk idiom,
 * {@code bulkOps(ORDERED).upsert(query(where("_id").is(id)), update)} (every statement an {@code updateMany} with
 * {@code upsert: true}), plain and through {@code GuardedMongoTemplate}. The raw clients and Spring share one plain
 * client; the guard has its own, configured by it.
 */
final class BulkClients implements AutoCloseable {
    static final List<String> ALL = List.of(
            "driver-ordered",
            "spring-ordered",
            "driver-unordered",
            "guarded",
            "spring-upsert",
            "guarded-spring-upsert");

    private final MongoClient raw;
    private final MongoClient guardedClient;
    private final WriteGuard guard = WriteGuard.create();
    private final MongoTemplate template;
    private final MongoTemplate guardedTemplate;
    private final String database;
    private final Map<String, GuardedCollection<Document>> wrapped = new ConcurrentHashMap<>();

    BulkClients(String connectionString, String database) {
        this.database = database;
        this.raw = MongoClients.create(MongoClientSettings.builder()
                .applyConnectionString(new ConnectionString(connectionString))
                .applicationName("lab-raw")
                .build());
        this.guardedClient = MongoClients.create(guard.configure(MongoClientSettings.builder()
                        .applyConnectionString(new ConnectionString(connectionString))
                        .applicationName("lab-guarded"))
                .build());
        this.template = new MongoTemplate(raw, database);
        this.guardedTemplate = new GuardedMongoTemplate(guardedClient, database, guard);
    }

    MongoClient raw() {
        return raw;
    }

    /** Writes the documents as one bulk of ReplaceOne upserts with the named client. */
    void write(String client, String collection, List<Document> documents) {
        switch (client) {
            case "driver-ordered" ->
                raw.getDatabase(database)
                        .getCollection(collection)
                        .bulkWrite(Workload.upserts(documents), new BulkWriteOptions().ordered(true));
            case "driver-unordered" ->
                raw.getDatabase(database)
                        .getCollection(collection)
                        .bulkWrite(Workload.upserts(documents), new BulkWriteOptions().ordered(false));
            case "spring-ordered" -> {
                BulkOperations bulk = template.bulkOps(BulkOperations.BulkMode.ORDERED, collection);
                for (Document document : documents) {
                    bulk.replaceOne(
                            Query.query(Criteria.where("_id").is(document.get("_id"))),
                            document,
                            FindAndReplaceOptions.options().upsert());
                }
                bulk.execute();
            }
            case "spring-upsert" -> springUpserts(template, collection, documents);
            case "guarded-spring-upsert" -> springUpserts(guardedTemplate, collection, documents);
            case "guarded" ->
                guarded(collection)
                        .bulkWrite(
                                Workload.upserts(documents), new BulkWriteOptions()); // the driver's default: ordered
            default -> throw new IllegalArgumentException("unknown client '" + client + "'; clients are " + ALL);
        }
    }

    /** {@code bulkOps(ORDERED).upsert(query(where("_id").is(id)), update)}: each document's fields as a {@code $set}. */
    private static void springUpserts(MongoTemplate template, String collection, List<Document> documents) {
        BulkOperations bulk = template.bulkOps(BulkOperations.BulkMode.ORDERED, collection);
        for (Document document : documents) {
            Update update = new Update();
            document.forEach((field, value) -> {
                if (!field.equals("_id")) {
                    update.set(field, value);
                }
            });
            bulk.upsert(Query.query(Criteria.where("_id").is(document.get("_id"))), update);
        }
        bulk.execute();
    }

    /** The guarded collection, wrapped once per name so that a measurement does not include wrapping. */
    GuardedCollection<Document> guarded(String collection) {
        return wrapped.computeIfAbsent(collection, name -> {
            MongoCollection<Document> target =
                    guardedClient.getDatabase(database).getCollection(name);
            return guard.guardCollection(guardedClient, target);
        });
    }

    /** Shards {@code collection} on {@code {_id: "hashed"}} (on a real cluster: after enableSharding). */
    void shardHashedId(String collection) {
        MongoDatabase admin = raw.getDatabase("admin");
        try {
            admin.runCommand(new Document("enableSharding", database));
        } catch (MongoCommandException e) {
            // The emulator shards without it; a real cluster may already have it enabled.
        }
        admin.runCommand(new Document("shardCollection", database + "." + collection)
                .append("key", new Document("_id", "hashed")));
    }

    @Override
    public void close() {
        guardedClient.close();
        raw.close();
    }
}
