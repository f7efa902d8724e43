package io.github.mongowriteguard.test;

import static com.mongodb.client.model.Filters.eq;
import static com.mongodb.client.model.Updates.inc;
import static org.assertj.core.api.Assertions.assertThat;

import com.mongodb.ConnectionString;
import com.mongodb.MongoClientSettings;
import com.mongodb.client.MongoClient;
import com.mongodb.client.MongoClients;
import com.mongodb.client.model.BulkWriteOptions;
import com.mongodb.client.model.UpdateOneModel;
import io.github.mongowriteguard.GuardedCollection;
import io.github.mongowriteguard.WriteGuard;
import io.github.mongowriteguard.outcome.WriteOutcome;
import io.github.mongowriteguard.outcome.WriteStatus;
import io.github.mongowriteguard.test.EmulatedMongo.ShardedCollection;
import io.github.mongowriteguard.testkit.EmulatedShardedCluster;
import io.github.mongowriteguard.testkit.stall.Stall;
import io.github.mongowriteguard.testkit.stall.StallHandle;
import io.github.mongowriteguard.testkit.truth.ReceivedCommand;
import io.github.mongowriteguard.testkit.truth.ServerTruth;
import java.time.Duration;
import java.util.List;
import java.util.function.Predicate;
import org.bson.Document;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * The README's fault-injection recipe ("Testing on the emulated cluster, with injected faults"), run as written: a
 * lost reply at mongos and a stall on every shard, then the servers' own count of commands and copies. The
 * {@code $inc} is applied once each time: the guard resends the same copy, and a settle proves the stalled one applied.
 */
@ExtendWith(EmulatedMongoExtension.class)
@EmulatedMongo(
        shards = 2,
        database = "shop",
        options = "socketTimeoutMS=1000",
        shardedCollections = @ShardedCollection(namespace = "shop.stock"))
class FaultInjectionRecipeTest {
    @Test
    void aLostReplyAndAStall_applyTheIncOnce_oneCopyEach(EmulatedShardedCluster cluster, ConnectionString uri)
            throws Exception {
        WriteGuard guard = WriteGuard.create();
        try (MongoClient client = MongoClients.create(
                guard.configure(MongoClientSettings.builder().applyConnectionString(uri))
                        .build())) {
            GuardedCollection<Document> stock =
                    guard.guardCollection(client, client.getDatabase("shop").getCollection("stock"));
            stock.insertOne(new Document("_id", 1).append("qty", 0));
            Predicate<ReceivedCommand> updates =
                    c -> c.commandName().equals("update") && "shop.stock".equals(c.namespace());
            ServerTruth truth = cluster.truth(); // what the shards received (cluster.mongosTruth(): mongos)
            truth.reset();
            cluster.mongos(0).loseReplies(1, "update"); // runs the command, then closes the connection
            stock.updateOne(eq("_id", 1), inc("qty", 1)); // the guard resends the same copy
            assertThat(truth.copies(updates)).hasSize(1); // sends grouped by (lsid, txnNumber)
            assertThat(truth.commands(updates)).hasSize(2).allMatch(c -> c.maxTimeMs() != null);

            truth.reset();
            List<StallHandle> stalls =
                    cluster.shardNames().stream() // hold writes on every shard, past the call's attempts
                            .map(s ->
                                    cluster.shard(s).stall(Stall.uninterruptible("shop.stock", Duration.ofSeconds(5))))
                            .toList();
            WriteOutcome<Document> outcome =
                    stock.execute(List.of(new UpdateOneModel<>(eq("_id", 1), inc("qty", 1))), new BulkWriteOptions());
            stalls.forEach(StallHandle::release); // outcome: UNKNOWN, settleable
            assertThat(outcome.outcome(0).status()).isEqualTo(WriteStatus.UNKNOWN);
            assertThat(outcome.outcome(0).settleable()).isTrue();
            assertThat(truth.awaitIdle(updates, Duration.ofSeconds(10))).isTrue();
            outcome = stock.settle(outcome); // APPLIED: the same copy, answered from its record
            assertThat(outcome.outcome(0).status()).isEqualTo(WriteStatus.APPLIED);
            assertThat(truth.copies(updates)).hasSize(1); // every send and the settle: one server copy
            assertThat(truth.maxConcurrentCopies(updates)).isEqualTo(1); // never two copies of one write side by side
            assertThat(client.getDatabase("shop")
                            .getCollection("stock")
                            .find(eq("_id", 1))
                            .first()
                            .getInteger("qty"))
                    .isEqualTo(2);
        }
    }
}
