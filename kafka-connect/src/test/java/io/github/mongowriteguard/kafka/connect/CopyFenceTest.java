package io.github.mongowriteguard.kafka.connect;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.mongodb.client.MongoClient;
import com.mongodb.client.MongoClients;
import com.mongodb.client.model.Filters;
import com.mongodb.client.model.UpdateOptions;
import com.mongodb.client.model.Updates;
import io.github.mongowriteguard.testkit.EmulatedCluster;
import io.github.mongowriteguard.testkit.EmulatedShardedCluster;
import io.github.mongowriteguard.testkit.stall.Stall;
import io.github.mongowriteguard.testkit.stall.StallHandle;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.connect.errors.RetriableException;
import org.apache.kafka.connect.sink.SinkRecord;
import org.bson.Document;
import org.junit.jupiter.api.Test;

/**
 * A task given a partition does not write while a copy of the partition's previous owner still runs on the server:
 * the copies are named by their comment, which {@code currentOp} shows through mongos.
 */
class CopyFenceTest {
    private static final TopicPartition T0 = new TopicPartition("t", 0);

    @Test
    void aNewOwner_waitsForThePreviousOwnersRunningCopy_thenWrites() throws Exception {
        try (EmulatedShardedCluster mongo = EmulatedCluster.sharded().shards(2).start();
                MongoClient client = MongoClients.create(mongo.connectionString())) {
            mongo.shardCollection("fence.events", ConnectHarness.HASHED_ID);
            CopyFence fence = new CopyFence(client, "sink");
            List<StallHandle> stalls = new ArrayList<>();
            for (int shard = 0; shard < 2; shard++) { // the previous owner's copy outlives its deadline and its owner
                stalls.add(mongo.shard(shard).stall(Stall.uninterruptible("fence.events", Duration.ofSeconds(2))));
            }
            String oldComment = fence.comment("t", List.of(0, 2));
            CompletableFuture<Void> previousOwner = CompletableFuture.runAsync(() -> client.getDatabase("fence")
                    .getCollection("events")
                    .updateOne(
                            Filters.eq("_id", "k1"),
                            Updates.inc("n", 1),
                            new UpdateOptions().upsert(true).comment(oldComment)));
            Instant deadline = Instant.now().plusSeconds(5);
            while (fence.runningCopies(Set.of(T0)).isEmpty() && Instant.now().isBefore(deadline)) {
                Thread.sleep(20);
            }
            assertThat(fence.runningCopies(Set.of(T0)))
                    .singleElement()
                    .asString()
                    .contains(oldComment);
            assertThat(fence.runningCopies(Set.of(new TopicPartition("t", 1)))).isEmpty();
            assertThat(new CopyFence(client, "other-sink").runningCopies(Set.of(T0)))
                    .isEmpty();

            GuardedMongoSinkTask task = new GuardedMongoSinkTask();
            task.start(taskConfig(mongo.connectionString()));
            try {
                task.open(List.of(T0));
                SinkRecord next = new SinkRecord("t", 0, null, "k2", null, Map.of("_id", "k2", "op", "inc", "n", 1), 7);
                assertThatThrownBy(() -> task.put(List.of(next)))
                        .isInstanceOf(RetriableException.class)
                        .hasMessageContaining("still run on the server");
                assertThat(count(client, "k2")).isNull();

                previousOwner.get();
                stalls.forEach(StallHandle::close);
                task.put(List.of(next)); // the copy ended: the fence opens
                assertThat(count(client, "k1")).isEqualTo(1);
                assertThat(count(client, "k2")).isEqualTo(1);
            } finally {
                task.stop();
            }
            // on the shards, the two owners' copies never ran at once
            assertThat(mongo.truth()
                            .maxConcurrentCopies(c -> c.comment() != null
                                    && c.comment().isString()
                                    && c.comment().asString().getValue().startsWith("mwg-connect:sink:t:")))
                    .isEqualTo(1);
        }
    }

    private static Map<String, String> taskConfig(String uri) {
        Map<String, String> config = ConnectHarness.taskConfig(uri, "fence");
        config.put(GuardedSinkSettings.FENCE_MAX_WAIT_MS, "30000");
        return config;
    }

    private static Integer count(MongoClient client, String id) {
        Document document = client.getDatabase("fence")
                .getCollection("events")
                .find(Filters.eq("_id", id))
                .first();
        return document == null ? null : ((Number) document.get("n")).intValue();
    }
}
