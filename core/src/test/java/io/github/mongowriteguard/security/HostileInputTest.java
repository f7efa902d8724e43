package io.github.mongowriteguard.security;

import static org.assertj.core.api.Assertions.assertThat;

import com.mongodb.client.MongoCollection;
import com.mongodb.client.model.Filters;
import com.mongodb.client.model.Updates;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashSet;
import java.util.List;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.function.Consumer;
import org.bson.Document;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * Hostile input side by side through the raw driver and the guard (each on its own collection of one deployment): the
 * guard throws the driver's exception class where the driver throws, stores the same documents where the driver
 * stores, and its own messages and log lines never carry a document value that the driver's exception does not.
 */
class HostileInputTest {
    private static final String SECRET = "s3cr3t-card-4111111111111111";
    private static SideBySide sides;

    @BeforeAll
    static void start() {
        sides = new SideBySide("hostile");
    }

    @AfterAll
    static void stop() {
        sides.close();
    }

    /** Runs {@code write} on both, compares what they threw and what they stored. */
    private static void sideBySide(SideBySide sides, String what, Consumer<MongoCollection<Document>> write) {
        Throwable driver = SideBySide.thrown(() -> write.accept(sides.driver));
        Throwable guard = SideBySide.thrown(() -> write.accept(sides.guarded.asMongoCollection()));
        assertThat(guard == null)
                .as(what + ": guard threw " + guard + ", driver " + driver)
                .isEqualTo(driver == null);
        if (driver instanceof org.bson.BsonMaximumSizeExceededException) {
            // the differences table: over 16 MiB is refused before anything is sent, as an InvalidBulkException
            assertThat(guard).as(what).isInstanceOf(io.github.mongowriteguard.exception.InvalidBulkException.class);
        } else if (driver != null) {
            assertThat(driver)
                    .as(what)
                    .isInstanceOf(
                            guard instanceof IllegalArgumentException
                                    ? IllegalArgumentException.class
                                    : guard.getClass());
        }
        if (driver != null && !String.valueOf(driver.getMessage()).contains(SECRET)) {
            assertThat(String.valueOf(guard.getMessage())).as(what).doesNotContain(SECRET);
        }
        assertThat(sides.guarded.unwrap().find().into(new ArrayList<>()))
                .as(what)
                .isEqualTo(sides.driver.find().into(new ArrayList<>()));
    }

    @Test
    void hostileDocuments_failOrStoreAsTheDriverDoes_andLeakNothingTheDriverDoesNot() {
        PrintStream stderr = System.err;
        SideBySide own = new SideBySide("hostile_documents");
        ByteArrayOutputStream log = new ByteArrayOutputStream();
        System.setErr(new PrintStream(log, true, StandardCharsets.UTF_8));
        try {
            sideBySide(own, "seed", c -> c.insertOne(new Document("_id", 1).append("card", SECRET)));
            sideBySide(own, "duplicate _id", c -> c.insertOne(new Document("_id", 1).append("card", SECRET)));
            sideBySide(
                    own,
                    "int64 _id equal to an int32 one",
                    c -> c.insertOne(new Document("_id", 1L).append("c", SECRET)));
            sideBySide(own, "double _id equal to an int32 one", c -> c.insertOne(new Document("_id", 1.0)));
            sideBySide(own, "null document", c -> c.insertMany(Arrays.asList(new Document("_id", 2), null)));
            sideBySide(own, "null filter", c -> c.updateOne(null, Updates.set("v", SECRET)));
            sideBySide(own, "null _id", c -> c.insertOne(new Document("_id", null).append("c", SECRET)));
            sideBySide(own, "null values", c -> c.insertOne(new Document("_id", 3).append("v", null)));
            sideBySide(
                    own,
                    "update without operators",
                    c -> c.updateOne(Filters.eq("_id", 1), new Document("card", SECRET)));
            sideBySide(
                    own,
                    "replacement with operators",
                    c -> c.replaceOne(Filters.eq("_id", 1), new Document("$set", new Document("card", SECRET))));
            sideBySide(own, "dotted field", c -> c.insertOne(new Document("_id", 4).append("a.b", SECRET)));
            sideBySide(
                    own,
                    "over 16 MiB",
                    c -> c.insertOne(
                            new Document("_id", 5).append("card", SECRET).append("pad", "x".repeat(17 * 1024 * 1024))));
            sideBySide(own, "empty string key", c -> c.insertOne(new Document("_id", 6).append("", SECRET)));
        } finally {
            System.setErr(stderr);
            own.close();
        }
        assertThat(log.toString(StandardCharsets.UTF_8)).doesNotContain(SECRET);
    }

    @Test
    void aDocumentTheValidatorRefuses_failsAsTheDriverFails_withTheServersErrInfo() {
        try (SideBySide own = new SideBySide("validated")) {
            org.bson.BsonDocument schema = org.bson.BsonDocument.parse(
                    "{$jsonSchema: {required: ['qty'], properties: {qty: {bsonType: 'int', minimum: 0}}}}");
            for (String database : List.of("driver", "guard")) {
                own.client.getDatabase(database).getCollection("validated").drop();
                own.client
                        .getDatabase(database)
                        .createCollection(
                                "validated",
                                new com.mongodb.client.model.CreateCollectionOptions()
                                        .validationOptions(
                                                new com.mongodb.client.model.ValidationOptions().validator(schema)));
            }
            Consumer<MongoCollection<Document>> write =
                    c -> c.insertOne(new Document("_id", 1).append("qty", -1).append("card", SECRET));

            Throwable driver = SideBySide.thrown(() -> write.accept(own.driver));
            Throwable guard = SideBySide.thrown(() -> write.accept(own.guarded.asMongoCollection()));

            assertThat(driver).isInstanceOf(com.mongodb.MongoWriteException.class);
            assertThat(guard).isExactlyInstanceOf(driver.getClass());
            com.mongodb.WriteError driverError = ((com.mongodb.MongoWriteException) driver).getError();
            com.mongodb.WriteError guardError = ((com.mongodb.MongoWriteException) guard).getError();
            assertThat(guardError.getCode()).isEqualTo(driverError.getCode()).isEqualTo(121);
            assertThat(guardError.getDetails()).isEqualTo(driverError.getDetails());
            assertThat(guard.getMessage()).doesNotContain(SECRET);
        }
    }

    @Test
    void thirtyTwoThreadsOnOneCollection_loseAndDuplicateNothing_asThroughTheDriver() throws Exception {
        MongoCollection<Document> driver = sides.driver;
        MongoCollection<Document> guard = sides.guarded.asMongoCollection();
        for (MongoCollection<Document> collection : List.of(driver, guard)) {
            collection.deleteMany(Filters.regex("_id", "^(t|counter)"));
            thirtyTwoThreads(collection);
        }

        for (MongoCollection<Document> stored : List.of(driver, sides.guarded.unwrap())) {
            assertThat(stored.countDocuments(Filters.regex("_id", "^t"))).isEqualTo(32 * 20);
            assertThat(stored.find(Filters.eq("_id", "counter")).first().getInteger("n"))
                    .isEqualTo(32 * 20);
        }
        assertThat(new HashSet<>(sides.guarded
                        .unwrap()
                        .find(Filters.regex("_id", "^(t|counter)"))
                        .into(new ArrayList<>())))
                .isEqualTo(new HashSet<>(
                        driver.find(Filters.regex("_id", "^(t|counter)")).into(new ArrayList<>())));
    }

    /** 32 threads, each inserting 20 documents of its own and incrementing one shared counter 20 times. */
    private static void thirtyTwoThreads(MongoCollection<Document> collection) throws Exception {
        collection.insertOne(new Document("_id", "counter").append("n", 0));
        ExecutorService pool = Executors.newFixedThreadPool(32);
        try {
            List<Future<?>> done = new ArrayList<>();
            for (int thread = 0; thread < 32; thread++) {
                int t = thread;
                done.add(pool.submit(() -> {
                    for (int i = 0; i < 20; i++) {
                        collection.insertOne(new Document("_id", "t" + t + "-" + i));
                        collection.updateOne(Filters.eq("_id", "counter"), Updates.inc("n", 1));
                    }
                }));
            }
            for (Future<?> future : done) {
                future.get();
            }
        } finally {
            pool.shutdown();
        }
    }
}
