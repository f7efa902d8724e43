package io.github.mongowriteguard;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.mongodb.MongoTimeoutException;
import com.mongodb.client.MongoCollection;
import com.mongodb.client.model.BulkWriteOptions;
import com.mongodb.client.model.InsertOneModel;
import com.mongodb.client.model.WriteModel;
import com.mongodb.event.CommandListener;
import com.mongodb.event.CommandStartedEvent;
import io.github.mongowriteguard.outcome.IndexOutcome;
import io.github.mongowriteguard.outcome.WriteOutcome;
import io.github.mongowriteguard.outcome.WriteStatus;
import io.github.mongowriteguard.testkit.TestDeployment;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.bson.Document;
import org.junit.jupiter.api.Test;

/**
 * Writes whose every attempt failed before reaching a server (here: the pool's only connection is held by a blocked
 * read, so checking one out times out) are reported as not sent, safe to send again, and the driver-style methods
 * throw what the driver throws then, a {@code MongoTimeoutException}, which Spring Kafka's error handler retries.
 */
@org.junit.jupiter.api.Tag("deployment") // runs against -Dmongo.uri (the real-mongodb profile)
class NotSentTest {

    @Test
    void writesThatNeverReachedAServer_areNotSent_retrySafe_andThrowMongoTimeoutException() throws Exception {
        CountDownLatch readHoldsTheConnection = new CountDownLatch(1);
        try (TestDeployment deployment = TestDeployment.replicaSet();
                GuardFixture fixture = new GuardFixture(
                        deployment.connectionString(),
                        WriteGuardSettings.defaults(),
                        10_000,
                        builder -> builder.applicationName("not-sent-test")
                                .applyToConnectionPoolSettings(
                                        pool -> pool.maxSize(1).maxWaitTime(200, TimeUnit.MILLISECONDS))
                                .addCommandListener(new CommandListener() {
                                    @Override
                                    public void commandStarted(CommandStartedEvent event) {
                                        if (event.getCommandName().equals("find")) {
                                            readHoldsTheConnection.countDown();
                                        }
                                    }
                                }))) {
            MongoCollection<Document> raw = fixture.client.getDatabase("guard").getCollection("not_sent");
            raw.insertOne(new Document("_id", 0));
            fixture.sent.clear();
            fixture.client
                    .getDatabase("admin")
                    .runCommand(new Document("configureFailPoint", "failCommand")
                            .append("mode", new Document("times", 1))
                            .append(
                                    "data",
                                    new Document("failCommands", List.of("find"))
                                            .append("appName", "not-sent-test")
                                            .append("blockConnection", true)
                                            .append("blockTimeMS", 6_000)));
            CompletableFuture<Document> blockedRead =
                    CompletableFuture.supplyAsync(() -> raw.find().first());
            assertThat(readHoldsTheConnection.await(10, TimeUnit.SECONDS)).isTrue();
            GuardedCollection<Document> guarded = fixture.wrap(raw);
            List<WriteModel<Document>> inserts =
                    List.of(new InsertOneModel<>(new Document("_id", 1)), new InsertOneModel<>(new Document("_id", 2)));

            WriteOutcome<Document> outcome = guarded.execute(inserts, new BulkWriteOptions());

            assertThat(outcome.outcomes()).allSatisfy(result -> {
                assertThat(result.status()).isEqualTo(WriteStatus.FAILED);
                assertThat(result.wasSent()).isFalse();
                assertThat(result.retrySafe()).isTrue();
            });
            assertThat(outcome.outcomes()).extracting(IndexOutcome::message).allMatch(m -> m.startsWith("not sent"));
            assertThatThrownBy(() -> guarded.bulkWrite(inserts))
                    .isInstanceOf(MongoTimeoutException.class)
                    .hasMessageContaining("none of the 2 writes on guard.not_sent was sent")
                    .hasMessageContaining("Nothing was applied");
            assertThat(fixture.sent).as("write commands that reached the wire").isEmpty();

            blockedRead.get(20, TimeUnit.SECONDS);
            assertThat(raw.countDocuments()).isEqualTo(1);
        }
    }
}
