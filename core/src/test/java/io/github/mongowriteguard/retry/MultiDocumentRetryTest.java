package io.github.mongowriteguard.retry;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.mongodb.ConnectionString;
import com.mongodb.MongoClientSettings;
import com.mongodb.client.MongoClient;
import com.mongodb.client.MongoClients;
import com.mongodb.client.model.Filters;
import com.mongodb.client.model.Updates;
import io.github.mongowriteguard.GuardedCollection;
import io.github.mongowriteguard.WriteGuard;
import io.github.mongowriteguard.WriteGuardSettings;
import io.github.mongowriteguard.exception.WriteOutcomeUnknownException;
import io.github.mongowriteguard.testkit.EmulatedCluster;
import io.github.mongowriteguard.testkit.EmulatedReplicaSet;
import io.github.mongowriteguard.testkit.stall.Stall;
import io.github.mongowriteguard.testkit.stall.StallHandle;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.bson.Document;
import org.junit.jupiter.api.Test;

/** updateMany and deleteMany are never retried blindly; the opt-in takes only provably idempotent updates. */
class MultiDocumentRetryTest {
    private static final WriteGuard GUARD = WriteGuard.create(WriteGuardSettings.builder()
            .serverDeadline(Duration.ofMillis(150))
            .retryPolicy(RetryPolicy.builder()
                    .maxAttempts(4)
                    .initialBackoff(Duration.ofMillis(10))
                    .build())
            .build());

    private static MongoClient client(EmulatedReplicaSet cluster) {
        return MongoClients.create(GUARD.configure(MongoClientSettings.builder()
                        .applyConnectionString(new ConnectionString(cluster.connectionString()))
                        .applyToSocketSettings(s -> s.readTimeout(300, TimeUnit.MILLISECONDS)))
                .build());
    }

    @Test
    void deleteManyAfterATimeout_isNeverRetried_andSaysWhy() throws Exception {
        try (EmulatedReplicaSet cluster = EmulatedCluster.replicaSet().start();
                MongoClient client = client(cluster)) {
            client.getDatabase("m").getCollection("c").insertMany(List.of(new Document("s", 1), new Document("s", 1)));
            GuardedCollection<Document> guarded =
                    GUARD.guardCollection(client, client.getDatabase("m").getCollection("c"));
            try (StallHandle stall = cluster.primary().stall(Stall.uninterruptible("m.c", Duration.ofMillis(800)))) {
                assertThatThrownBy(() -> guarded.deleteMany(Filters.eq("s", 1)))
                        .isInstanceOfSatisfying(WriteOutcomeUnknownException.class, e -> {
                            assertThat(e.getMessage())
                                    .contains("multi-document write")
                                    .contains("unknown number of documents")
                                    .contains("not retried");
                            assertThat(e.outcome().sends()).isEqualTo(1);
                        });
            }
            assertThat(cluster.truth().awaitIdle(c -> true, Duration.ofSeconds(5)))
                    .isTrue();
            assertThat(cluster.truth().commands("delete")).hasSize(1);
        }
    }

    @Test
    void optIn_refusesNonIdempotentUpdatesAndDeletes_beforeAnythingIsSent() {
        try (EmulatedReplicaSet cluster = EmulatedCluster.replicaSet().start();
                MongoClient client = client(cluster)) {
            GuardedCollection<Document> optedIn = GUARD.guardCollection(
                            client, client.getDatabase("m").getCollection("c"))
                    .withIdempotentMultiDocumentRetries();

            assertThatThrownBy(() -> optedIn.updateMany(Filters.eq("s", 1), Updates.inc("n", 1)))
                    .isInstanceOf(IllegalArgumentException.class)
                    .hasMessageContaining("$inc is not idempotent")
                    .hasMessageContaining("Nothing was sent");
            assertThatThrownBy(() -> optedIn.deleteMany(Filters.eq("s", 1)))
                    .hasMessageContaining("deleteMany is never retried");
            assertThat(cluster.truth().commands(c -> List.of("update", "delete").contains(c.commandName())))
                    .isEmpty();
        }
    }

    @Test
    void optIn_retriesAnIdempotentUpdateMany_eachRetryANewCopyStartedOnlyAfterTheGate() throws Exception {
        try (EmulatedReplicaSet cluster = EmulatedCluster.replicaSet().start();
                MongoClient client = client(cluster)) {
            client.getDatabase("m").getCollection("c").insertMany(List.of(new Document("s", 1), new Document("s", 1)));
            GuardedCollection<Document> optedIn = GUARD.guardCollection(
                            client, client.getDatabase("m").getCollection("c"))
                    .withIdempotentMultiDocumentRetries();
            client.getDatabase("admin")
                    .runCommand(new Document("configureFailPoint", "failCommand")
                            .append("mode", new Document("times", 1))
                            .append("data", new Document("failCommands", List.of("update")).append("errorCode", 91)));

            optedIn.updateMany(Filters.eq("s", 1), Updates.set("s", 2));

            assertThat(cluster.truth().copies(c -> c.commandName().equals("update")))
                    .hasSize(2);
            assertThat(cluster.truth().maxConcurrentCopies(c -> c.commandName().equals("update")))
                    .isEqualTo(1);
            assertThat(client.getDatabase("m").getCollection("c").countDocuments(Filters.eq("s", 2)))
                    .isEqualTo(2);
        }
    }
}
