package io.github.mongowriteguard.testkit.node;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.mongodb.MongoCommandException;
import com.mongodb.client.MongoClient;
import io.github.mongowriteguard.testkit.Clients;
import io.github.mongowriteguard.testkit.EmulatedCluster;
import io.github.mongowriteguard.testkit.EmulatedReplicaSet;
import org.bson.BsonDocument;
import org.bson.Document;
import org.junit.jupiter.api.Test;

/**
 * {@link AuthorizationSession}: once the set has a user, a connection that did not authenticate may run only the
 * handshake commands (those whose {@code requiresAuth()} is false), and the {@code failCommand} fail point comes before
 * the authorization check, so a command the user may not run meets the fail point first and uses it up (mongodb/mongo
 * {@code src/mongo/db/auth/authorization_session_impl.cpp}; 4.4 {@code src/mongo/db/service_entry_point_common.cpp}
 * {@code execCommandDatabase}: {@code CommandHelpers::evaluateFailCommandFailPoint}, then
 * {@code invocation->checkAuthorization}). Which roles allow which commands is {@code auth.BuiltinRolesTest}.
 */
class AuthorizationSessionTest {

    @Test
    void withoutAuthentication_onlyTheHandshakeCommandsRun() {
        try (EmulatedReplicaSet set = EmulatedCluster.replicaSet()
                        .user("app", "secret", "readWriteAnyDatabase")
                        .start();
                MongoClient anonymous = Clients.client(set.connectionString())) {
            assertThat(anonymous.getDatabase("admin").runCommand(new Document("ping", 1)))
                    .containsEntry("ok", 1.0);
            assertThat(anonymous.getDatabase("admin").runCommand(new Document("buildInfo", 1)))
                    .containsKey("version");

            for (Document command : new Document[] {
                new Document("find", "c"), new Document("serverStatus", 1), new Document("listDatabases", 1)
            }) {
                assertThatThrownBy(() -> anonymous.getDatabase("admin").runCommand(command))
                        .as(command.toJson())
                        .isInstanceOfSatisfying(MongoCommandException.class, e -> {
                            assertThat(e.getErrorCode()).isEqualTo(13);
                            assertThat(e.getErrorMessage()).contains("requires authentication");
                        });
            }
        }
    }

    @Test
    void aCommandTheUserMayNotRun_meetsTheFailPointFirst_andUsesItUp() {
        try (EmulatedReplicaSet set = EmulatedCluster.replicaSet()
                        .user("reader", "secret", "readAnyDatabase")
                        .user("app", "secret", "readWriteAnyDatabase")
                        .start();
                MongoClient reader = Clients.client(
                        Clients.withUser(set.connectionString(), "reader", "secret"), b -> b.retryWrites(false));
                MongoClient app = Clients.client(
                        Clients.withUser(set.connectionString(), "app", "secret"), b -> b.retryWrites(false))) {
            set.primary()
                    .failCommand()
                    .configure(
                            BsonDocument.parse("{mode: {times: 1}, data: {failCommands: ['insert'], errorCode: 91}}"));

            assertThatThrownBy(() ->
                            reader.getDatabase("shop").getCollection("orders").insertOne(new Document("_id", 1)))
                    .as("the fail point's error, not Unauthorized")
                    .isInstanceOfSatisfying(
                            com.mongodb.MongoException.class,
                            e -> assertThat(e.getCode()).isEqualTo(91));
            assertThatThrownBy(() ->
                            reader.getDatabase("shop").getCollection("orders").insertOne(new Document("_id", 1)))
                    .isInstanceOfSatisfying(
                            com.mongodb.MongoException.class,
                            e -> assertThat(e.getCode()).isEqualTo(13));
            app.getDatabase("shop").getCollection("orders").insertOne(new Document("_id", 1));
            assertThat(app.getDatabase("shop").getCollection("orders").countDocuments())
                    .isEqualTo(1);
        }
    }
}
