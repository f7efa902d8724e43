package io.github.mongowriteguard.test;

import static com.mongodb.client.model.Filters.eq;
import static com.mongodb.client.model.Updates.inc;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowableOfType;

import com.mongodb.ConnectionString;
import com.mongodb.MongoClientSettings;
import com.mongodb.client.MongoClient;
import com.mongodb.client.MongoClients;
import io.github.mongowriteguard.GuardedCollection;
import io.github.mongowriteguard.WriteGuard;
import io.github.mongowriteguard.exception.WriteOutcomeUnknownException;
import io.github.mongowriteguard.outcome.WriteOutcome;
import io.github.mongowriteguard.outcome.WriteStatus;
import io.github.mongowriteguard.test.EmulatedMongo.ShardedCollection;
import io.github.mongowriteguard.testkit.EmulatedShardedCluster;
import io.github.mongowriteguard.testkit.stall.Stall;
import io.github.mongowriteguard.testkit.stall.StallHandle;
import io.github.mongowriteguard.testkit.truth.ReceivedCommand;
import io.github.mongowriteguard.testkit.truth.ServerTruth;
import java.time.Duration;
import java.util.ArrayList;
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
    private static final Predicate<ReceivedCommand> UPDATES =
            c -> c.commandName().equals("update") && "shop.stock".equals(c.namespace());

    @Test
    @SuppressWarnings("unchecked")
    void aLostReplyAndAStall_applyTheIncOnce_oneCopyEach(EmulatedShardedCluster cluster, ConnectionString uri)
            throws Exception {
        WriteGuard guard = WriteGuard.create();
        try (MongoClient client = MongoClients.create(
                guard.configure(MongoClientSettings.builder().applyConnectionString(uri))
                        .build())) {
            GuardedCollection<Document> stock =
                    guard.guardCollection(client, client.getDatabase("shop").getCollection("stock"));
            stock.insertOne(new Document("_id", 1).append("qty", 0));
            ServerTruth truth = cluster.truth(); // what the shards received
            truth.reset();

            // A lost reply: mongos runs the update, then closes the connection instead of answering.
            cluster.mongos(0).loseReplies(1, "update");
            stock.updateOne(eq("_id", 1), inc("qty", 1)); // the guard resends the same copy: answered from its record
            assertThat(truth.copies(UPDATES)).hasSize(1);
            assertThat(truth.maxConcurrentCopies(UPDATES)).isEqualTo(1);
            assertThat(truth.commands(UPDATES)).allMatch(c -> c.maxTimeMs() != null); // the guard's deadline

            // A stall longer than the call: the write ends UNKNOWN; settle it once the stall ends.
            truth.reset();
            List<StallHandle> stalls = new ArrayList<>();
            for (String shard : cluster.shardNames()) {
                stalls.add(cluster.shard(shard).stall(Stall.uninterruptible("shop.stock", Duration.ofSeconds(5))));
            }
            WriteOutcomeUnknownException unknown = catchThrowableOfType(
                    WriteOutcomeUnknownException.class, () -> stock.updateOne(eq("_id", 1), inc("qty", 1)));
            stalls.forEach(StallHandle::close);
            assertThat(truth.awaitIdle(UPDATES, Duration.ofSeconds(10))).isTrue();
            WriteOutcome<Document> settled = stock.settle((WriteOutcome<Document>) unknown.outcome());

            assertThat(settled.outcome(0).status()).isEqualTo(WriteStatus.APPLIED);
            assertThat(truth.copies(UPDATES)).hasSize(1); // every send and the settle: one server copy
            assertThat(truth.maxConcurrentCopies(UPDATES)).isEqualTo(1);
            assertThat(client.getDatabase("shop")
                            .getCollection("stock")
                            .find(eq("_id", 1))
                            .first()
                            .getInteger("qty"))
                    .isEqualTo(2);
        }
    }
}
