package io.github.mongowriteguard.faults;

import static org.assertj.core.api.Assertions.assertThat;

import com.mongodb.ConnectionString;
import com.mongodb.MongoClientSettings;
import com.mongodb.WriteConcern;
import com.mongodb.client.MongoClient;
import com.mongodb.client.MongoClients;
import com.mongodb.client.model.BulkWriteOptions;
import com.mongodb.client.model.Filters;
import com.mongodb.client.model.InsertOneModel;
import com.mongodb.client.model.UpdateOneModel;
import com.mongodb.client.model.Updates;
import io.github.mongowriteguard.GuardedCollection;
import io.github.mongowriteguard.WriteGuard;
import io.github.mongowriteguard.WriteGuardSettings;
import io.github.mongowriteguard.outcome.IndexOutcome;
import io.github.mongowriteguard.outcome.WriteOutcome;
import io.github.mongowriteguard.outcome.WriteStatus;
import io.github.mongowriteguard.retry.RetryPolicy;
import io.github.mongowriteguard.testkit.EmulatedCluster;
import io.github.mongowriteguard.testkit.EmulatedReplicaSet;
import io.github.mongowriteguard.testkit.EmulatedShardedCluster;
import io.github.mongowriteguard.testkit.node.EmulatedNode;
import io.github.mongowriteguard.testkit.sharding.ShardKey;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.bson.BsonDocument;
import org.bson.BsonString;
import org.bson.Document;
import org.junit.jupiter.api.Test;

/**
 * Guard bugs the fault suite found, each reduced to a deterministic regression test, with the fault-suite seed that
 * found it (both fixed: a write-concern error is resent when retryable and leaves the write UNKNOWN otherwise; a
 * lost shard answer behind mongos is UNKNOWN, not FAILED).
 */
class GuardBugsFoundTest {

    private static WriteGuard guard() {
        return WriteGuard.create(WriteGuardSettings.builder()
                .serverDeadline(Duration.ofMillis(600))
                .retryPolicy(RetryPolicy.builder()
                        .maxAttempts(3)
                        .initialBackoff(Duration.ofMillis(10))
                        .gateGrace(Duration.ofMillis(20))
                        .build())
                .build());
    }

    private static MongoClient client(WriteGuard guard, String connectionString) {
        return MongoClients.create(guard.configure(MongoClientSettings.builder()
                        .applyConnectionString(new ConnectionString(connectionString))
                        .applyToServerSettings(s -> s.heartbeatFrequency(100, TimeUnit.MILLISECONDS)
                                .minHeartbeatFrequency(20, TimeUnit.MILLISECONDS))
                        .applyToSocketSettings(s -> s.readTimeout(1000, TimeUnit.MILLISECONDS)))
                .build());
    }

    /**
     * Found by {@code -Dfaults.seed=99 -Dfaults.operations=800} on the replica set ("lost after a write-concern error:
     * INSERT c2-224-0 ... APPLIED", also an {@code $inc} and an {@code updateMany}): the secondaries lag, the primary
     * applies a {@code w: "majority"} write and waits for them, a failover steps it down, the wait ends with the
     * write-concern error {@code PrimarySteppedDown} (189, retryable) and the write, which no majority had, is rolled
     * back. The guard reports the write APPLIED (the write-concern error only on the whole outcome) and does not resend
     * it, where the driver retries a retryable write on a retryable write-concern error (the retryable-writes
     * specification), so the new primary would either return the recorded result or apply it. APPLIED must mean
     * applied; honest here: resend the same copy (and report what it proves) or UNKNOWN.
     */
    @Test
    void aMajorityWriteRolledBackAfterPrimarySteppedDown_isNotReportedApplied() throws Exception {
        try (EmulatedReplicaSet set = EmulatedCluster.replicaSet()
                .members(3)
                .electionTimeout(Duration.ofMillis(300))
                .start()) {
            WriteGuard guard = guard();
            try (MongoClient client = client(guard, set.connectionString())) {
                GuardedCollection<Document> orders = guard.guardCollection(
                        client,
                        client.getDatabase("bugs").getCollection("orders").withWriteConcern(WriteConcern.MAJORITY));
                orders.unwrap().insertOne(new Document("_id", "before"));
                EmulatedNode first = set.primary();
                set.secondaries().forEach(set::pauseReplication);
                java.util.concurrent.CompletableFuture<WriteOutcome<Document>> write =
                        java.util.concurrent.CompletableFuture.supplyAsync(() -> orders.execute(
                                List.of(new InsertOneModel<>(new Document("_id", "order-1"))), new BulkWriteOptions()));
                Thread.sleep(200);
                set.stepDown(Duration.ofSeconds(1), Duration.ZERO, true);
                set.members().forEach(set::resumeReplication);
                WriteOutcome<Document> outcome = write.get(30, TimeUnit.SECONDS);
                set.awaitPrimary(Duration.ofSeconds(5));
                set.awaitReplication(Duration.ofSeconds(5));

                IndexOutcome insert = outcome.outcome(0);
                boolean stored = orders.unwrap().countDocuments(Filters.eq("_id", "order-1")) == 1;
                assertThat(set.primary()).isNotSameAs(first);
                assertThat(insert.status() != WriteStatus.APPLIED || stored)
                        .as(
                                "%s (write-concern error %s) but the document is %s",
                                insert,
                                outcome.writeConcernError(),
                                stored ? "stored" : "gone (rolled back: " + set.rolledBack() + ")")
                        .isTrue();
            }
        }
    }

    /**
     * Found by {@code -Dfaults.seed=20261130 -Dfaults.operations=1500} on the sharded cluster: "INC c1-1492-0 ... FAILED
     * code=6 (connection to shard02 was closed) retrySafe", although the {@code $inc} was applied.
     *
     * <p>The shard applies the update, then its connection to mongos closes before the reply (a network failure after
     * the shard answered, here {@code loseReplies} on the shard, also on the same-copy resends). mongos answers
     * {@code ok: 1} with a statement error {@code HostUnreachable} (6) for each statement of the child batch, as a real
     * mongos turns a failed child batch into one write error per statement ({@code BatchWriteOp::noteBatchError}). That
     * error says mongos lost the shard's answer, not that the shard did not apply it; the guard reports FAILED ("the
     * server said it did not apply it") and, since 6 is transient, retry-safe: a caller resending the {@code $inc} as
     * advised applies it twice. Honest: UNKNOWN, and not retry-safe for an {@code $inc}.
     */
    @Test
    void aShardAnswerLostBehindMongos_leavesAnIncUnknown_notFailedAndRetrySafe() {
        try (EmulatedShardedCluster cluster =
                EmulatedCluster.sharded().shards(2).start()) {
            cluster.shardCollection("bugs.counters", ShardKey.of(new BsonDocument("_id", new BsonString("hashed"))));
            WriteGuard guard = guard();
            try (MongoClient client = client(guard, cluster.connectionString())) {
                client.getDatabase("bugs").getCollection("counters").insertOne(new Document("_id", "k").append("n", 0));
                GuardedCollection<Document> counters =
                        guard.guardCollection(client, client.getDatabase("bugs").getCollection("counters"));
                // Every answer lost: mongos' own resends (up to 3 per child batch) and the guard's (same copy)
                // included.
                for (int shard = 0; shard < 2; shard++) {
                    cluster.shard(shard).loseReplies(100, "update");
                }

                WriteOutcome<Document> outcome = counters.execute(
                        List.of(new UpdateOneModel<>(Filters.eq("_id", "k"), Updates.inc("n", 1))),
                        new BulkWriteOptions());

                IndexOutcome inc = outcome.outcome(0);
                assertThat(counters.unwrap().find().first().getInteger("n"))
                        .as("the shard applied it once")
                        .isEqualTo(1);
                assertThat(inc.status()).as(inc.toString()).isEqualTo(WriteStatus.UNKNOWN);
                assertThat(inc.retrySafe())
                        .as("a new copy of an $inc applies it twice")
                        .isFalse();

                // A few answers lost: a later send of the same copy gets the recorded result, which proves it applied.
                for (int shard = 0; shard < 2; shard++) {
                    cluster.shard(shard).loseReplies(0, "update");
                    cluster.shard(shard).loseReplies(5, "update");
                }
                WriteOutcome<Document> proven = counters.execute(
                        List.of(new UpdateOneModel<>(Filters.eq("_id", "k"), Updates.inc("n", 1))),
                        new BulkWriteOptions());
                assertThat(proven.outcome(0).status())
                        .as(proven.outcome(0).toString())
                        .isEqualTo(WriteStatus.APPLIED);
                assertThat(counters.unwrap().find().first().getInteger("n"))
                        .as("applied once more, not twice")
                        .isEqualTo(2);
            }
        }
    }
}
