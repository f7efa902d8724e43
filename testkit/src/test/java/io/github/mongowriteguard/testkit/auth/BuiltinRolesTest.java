package io.github.mongowriteguard.testkit.auth;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.mongodb.MongoCommandException;
import com.mongodb.MongoWriteException;
import com.mongodb.client.MongoClient;
import com.mongodb.client.MongoCollection;
import com.mongodb.client.model.Filters;
import com.mongodb.client.model.FindOneAndUpdateOptions;
import com.mongodb.client.model.UpdateOptions;
import com.mongodb.client.model.Updates;
import io.github.mongowriteguard.testkit.Clients;
import io.github.mongowriteguard.testkit.EmulatedCluster;
import io.github.mongowriteguard.testkit.EmulatedReplicaSet;
import io.github.mongowriteguard.testkit.EmulatedShardedCluster;
import org.bson.Document;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * The server's built-in roles checked for the commands the driver and the guard send, through the real driver: a role
 * on one database grants nothing on another, {@code read} no writes, {@code dbAdmin} no reads or writes of documents,
 * {@code clusterMonitor} {@code inprog} but no documents, {@code *AnyDatabase} every normal database; a refusal is the
 * server's {@code Unauthorized} (13), "not authorized on &lt;db&gt; to execute command ..."
 * ({@code src/mongo/db/auth/builtin_roles.yml}, {@code authorization_checks.cpp}).
 */
class BuiltinRolesTest {
    private static EmulatedReplicaSet set;

    @BeforeAll
    static void start() {
        set = EmulatedCluster.replicaSet()
                .user("admin", "secret", "root")
                .user("writer", "secret", "readWrite@shop")
                .user("reader", "secret", "read@shop")
                .user("dba", "secret", "dbAdmin@shop")
                .user("monitor", "secret", "clusterMonitor")
                .user("any", "secret", "readWriteAnyDatabase")
                .user("anyReader", "secret", "readAnyDatabase")
                .start();
        try (MongoClient admin = client("admin")) {
            admin.getDatabase("shop").getCollection("orders").insertOne(new Document("_id", 1).append("n", 0));
            admin.getDatabase("other").getCollection("orders").insertOne(new Document("_id", 1).append("n", 0));
        }
    }

    @AfterAll
    static void stop() {
        set.close();
    }

    @Test
    void readWrite_onItsDatabase_readsAndWrites_andNothingOnAnother() {
        try (MongoClient writer = client("writer")) {
            MongoCollection<Document> shop = writer.getDatabase("shop").getCollection("orders");
            shop.insertOne(new Document("_id", 2));
            shop.updateOne(Filters.eq("_id", 2), Updates.set("n", 1), new UpdateOptions().upsert(true));
            shop.findOneAndUpdate(
                    Filters.eq("_id", 2), Updates.inc("n", 1), new FindOneAndUpdateOptions().upsert(true));
            assertThat(shop.countDocuments(Filters.in("_id", 1, 2))).isEqualTo(2);
            shop.deleteOne(Filters.eq("_id", 2));

            MongoCollection<Document> other = writer.getDatabase("other").getCollection("orders");
            assertUnauthorized("other", () -> other.insertOne(new Document("_id", 3)));
            assertUnauthorized("other", () -> other.find().first());
            assertUnauthorized("other", () -> other.deleteOne(Filters.eq("_id", 1)));
            assertUnauthorized("admin", () -> writer.getDatabase("admin").runCommand(new Document("serverStatus", 1)));
        }
    }

    @Test
    void read_reads_butEveryWriteIsRefused() {
        try (MongoClient reader = client("reader")) {
            MongoCollection<Document> shop = reader.getDatabase("shop").getCollection("orders");
            assertThat(shop.find(Filters.eq("_id", 1)).first()).isNotNull();
            assertUnauthorized("shop", () -> shop.insertOne(new Document("_id", 4)));
            assertUnauthorized("shop", () -> shop.updateOne(Filters.eq("_id", 1), Updates.set("n", 5)));
            assertUnauthorized("shop", () -> shop.deleteOne(Filters.eq("_id", 1)));
            assertUnauthorized("shop", () -> shop.findOneAndUpdate(Filters.eq("_id", 1), Updates.set("n", 5)));
            assertUnauthorized("shop", () -> shop.findOneAndDelete(Filters.eq("_id", 1)));
        }
        try (MongoClient admin = client("admin")) {
            assertThat(admin.getDatabase("shop")
                            .getCollection("orders")
                            .find(Filters.eq("_id", 1))
                            .first())
                    .containsEntry("n", 0);
        }
    }

    @Test
    void dbAdmin_administers_butNeitherReadsNorWritesDocuments() {
        try (MongoClient dba = client("dba")) {
            dba.getDatabase("shop").createCollection("audit");
            dba.getDatabase("shop").getCollection("audit").createIndex(new Document("a", 1));
            MongoCollection<Document> shop = dba.getDatabase("shop").getCollection("orders");
            assertUnauthorized("shop", () -> shop.find().first());
            assertUnauthorized("shop", () -> shop.insertOne(new Document("_id", 5)));
        }
    }

    @Test
    void clusterMonitor_seesOperations_butNoDocuments() {
        try (MongoClient monitor = client("monitor")) {
            assertThat(monitor.getDatabase("admin").runCommand(new Document("currentOp", 1)))
                    .containsKey("inprog");
            assertThat(monitor.getDatabase("admin").runCommand(new Document("serverStatus", 1)))
                    .isNotNull();
            assertUnauthorized(
                    "shop",
                    () -> monitor.getDatabase("shop")
                            .getCollection("orders")
                            .find()
                            .first());
            assertUnauthorized(
                    "shop",
                    () -> monitor.getDatabase("shop").getCollection("orders").insertOne(new Document()));
        }
    }

    @Test
    void anyDatabaseRoles_coverEveryNormalDatabase() {
        try (MongoClient any = client("any");
                MongoClient anyReader = client("anyReader")) {
            any.getDatabase("shop").getCollection("orders").insertOne(new Document("_id", 6));
            any.getDatabase("other").getCollection("orders").insertOne(new Document("_id", 6));
            assertThat(anyReader.getDatabase("other").getCollection("orders").countDocuments())
                    .isEqualTo(2);
            assertUnauthorized(
                    "other",
                    () -> anyReader.getDatabase("other").getCollection("orders").insertOne(new Document()));
            assertUnauthorized(
                    "local", () -> any.getDatabase("local").getCollection("x").insertOne(new Document()));
        }
    }

    @Test
    void throughMongos_theRouterRefusesAsMongodDoes() {
        try (EmulatedShardedCluster sharded = EmulatedCluster.sharded()
                        .shards(2)
                        .user("reader", "secret", "read@shop")
                        .user("admin", "secret", "root")
                        .start();
                MongoClient admin = Clients.client(uri(sharded.connectionString(), "admin"));
                MongoClient reader = Clients.client(uri(sharded.connectionString(), "reader"))) {
            admin.getDatabase("shop").getCollection("orders").insertOne(new Document("_id", 1));
            assertThat(reader.getDatabase("shop").getCollection("orders").countDocuments())
                    .isEqualTo(1);
            assertUnauthorized(
                    "shop",
                    () -> reader.getDatabase("shop").getCollection("orders").insertOne(new Document("_id", 2)));
        }
    }

    @Test
    void roles_areValidatedAsTheServerValidatesThem() {
        Users users = new Users();
        assertThatThrownBy(() -> users.add("u", "p", "clusterMonitor@shop"))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("only on the admin database");
        assertThatThrownBy(() -> users.add("u", "p", "superuser"))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("unknown role");
    }

    private static void assertUnauthorized(String database, Runnable call) {
        assertThatThrownBy(call::run)
                .satisfies(e -> {
                    int code = e instanceof MongoWriteException w
                            ? w.getCode()
                            : ((MongoCommandException) e).getErrorCode();
                    assertThat(code).isEqualTo(13);
                    if (e instanceof MongoCommandException c) {
                        assertThat(c.getErrorCodeName()).isEqualTo("Unauthorized");
                    }
                })
                .hasMessageContaining("not authorized on " + database + " to execute command");
    }

    private static MongoClient client(String user) {
        return Clients.client(uri(set.connectionString(), user));
    }

    private static String uri(String connectionString, String user) {
        return Clients.withUser(connectionString, user, "secret");
    }
}
