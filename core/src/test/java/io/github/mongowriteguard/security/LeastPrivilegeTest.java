package io.github.mongowriteguard.security;

import static org.assertj.core.api.Assertions.assertThat;

import com.mongodb.ConnectionString;
import com.mongodb.MongoClientSettings;
import com.mongodb.MongoCommandException;
import com.mongodb.client.MongoClient;
import com.mongodb.client.MongoClients;
import com.mongodb.client.MongoCollection;
import com.mongodb.client.model.Filters;
import com.mongodb.client.model.InsertOneModel;
import com.mongodb.client.model.UpdateOneModel;
import com.mongodb.client.model.Updates;
import com.mongodb.client.model.WriteModel;
import io.github.mongowriteguard.GuardedCollection;
import io.github.mongowriteguard.WriteGuard;
import io.github.mongowriteguard.WriteGuardSettings;
import io.github.mongowriteguard.testkit.EmulatedCluster;
import io.github.mongowriteguard.testkit.EmulatedReplicaSet;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;
import org.bson.Document;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * The guard under least privilege, side by side with the raw driver on the same user's connection: with
 * {@code readWrite} on the application's database it writes everything the driver writes; where the user may not write
 * ({@code read} only, or a role on another database) it fails exactly as the driver fails (the server's
 * {@code Unauthorized}, 13, as the driver's own exception) and writes nothing. The testkit checks the server's built-in
 * roles for every command the guard sends ({@code insert}, {@code update}, {@code delete}, {@code findAndModify}).
 */
class LeastPrivilegeTest {
    private static EmulatedReplicaSet set;

    @BeforeAll
    static void start() {
        set = EmulatedCluster.replicaSet()
                .user("admin", "secret", "root")
                .user("app", "secret", "readWrite@shop")
                .user("reader", "secret", "read@shop")
                .user("elsewhere", "secret", "readWrite@other")
                .start();
    }

    @AfterAll
    static void stop() {
        set.close();
    }

    @Test
    void readWriteOnItsDatabase_isAllTheGuardNeedsToWrite() {
        try (Connection app = new Connection("app", "")) {
            List<Consumer<MongoCollection<Document>>> writes = writes();
            for (Consumer<MongoCollection<Document>> write : writes) {
                write.accept(app.driver);
                write.accept(app.guarded.asMongoCollection());
            }
            assertThat(app.guarded.unwrap().find().into(new java.util.ArrayList<>()))
                    .isEqualTo(app.driver.find().into(new java.util.ArrayList<>()))
                    .isNotEmpty();
        }
    }

    @Test
    void readOnly_andARoleOnAnotherDatabase_failAsTheDriverFails_andWriteNothing() {
        for (String user : List.of("reader", "elsewhere")) {
            try (Connection denied = new Connection(user, "_denied")) {
                for (Consumer<MongoCollection<Document>> write : writes()) {
                    Throwable driver = SideBySide.thrown(() -> write.accept(denied.driver));
                    Throwable guard = SideBySide.thrown(() -> write.accept(denied.guarded.asMongoCollection()));

                    assertThat(driver).as(user).isInstanceOf(MongoCommandException.class);
                    assertThat(((MongoCommandException) driver).getErrorCode()).isEqualTo(13);
                    assertThat(guard).as(user).isExactlyInstanceOf(driver.getClass());
                    assertThat(((MongoCommandException) guard).getErrorCode()).isEqualTo(13);
                    assertThat(((MongoCommandException) guard).getErrorCodeName())
                            .isEqualTo("Unauthorized");
                }
            }
        }
        try (Connection admin = new Connection("admin", "_denied")) {
            assertThat(admin.guarded.unwrap().countDocuments(Filters.gte("_id", 100)))
                    .isZero();
        }
    }

    private static List<Consumer<MongoCollection<Document>>> writes() {
        List<WriteModel<Document>> bulk = List.of(
                new InsertOneModel<>(new Document("_id", 103).append("v", 1)),
                new UpdateOneModel<>(Filters.eq("_id", 103), Updates.inc("v", 1)));
        return List.of(
                c -> c.insertOne(new Document("_id", 100).append("v", 1)),
                c -> c.updateOne(Filters.eq("_id", 100), Updates.set("v", 2)),
                c -> c.findOneAndUpdate(Filters.eq("_id", 100), Updates.inc("v", 1)),
                c -> c.insertMany(List.of(new Document("_id", 101), new Document("_id", 102))),
                c -> c.bulkWrite(bulk),
                c -> c.deleteOne(Filters.eq("_id", 101)),
                c -> c.findOneAndDelete(Filters.eq("_id", 102)));
    }

    /** One user's client: the raw collection {@code shop.driver} and the guarded {@code shop.guard}. */
    private static final class Connection implements AutoCloseable {
        final MongoClient client;
        final MongoCollection<Document> driver;
        final GuardedCollection<Document> guarded;

        Connection(String user, String suffix) {
            WriteGuard guard = WriteGuard.create(WriteGuardSettings.defaults());
            String uri = set.connectionString().replace("mongodb://", "mongodb://" + user + ":secret@");
            client = MongoClients.create(guard.configure(MongoClientSettings.builder()
                            .applyConnectionString(
                                    new ConnectionString(uri + (uri.contains("?") ? "&" : "?") + "authSource=admin"))
                            .applyToSocketSettings(s -> s.readTimeout(10, TimeUnit.SECONDS)))
                    .build());
            driver = client.getDatabase("shop").getCollection("driver" + suffix);
            guarded = guard.guardCollection(client, client.getDatabase("shop").getCollection("guard" + suffix));
        }

        @Override
        public void close() {
            client.close();
        }
    }
}
