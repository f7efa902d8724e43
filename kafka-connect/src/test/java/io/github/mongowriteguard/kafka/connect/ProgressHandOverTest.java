package io.github.mongowriteguard.kafka.connect;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.mongodb.client.MongoClient;
import com.mongodb.client.MongoClients;
import io.github.mongowriteguard.testkit.EmulatedCluster;
import io.github.mongowriteguard.testkit.EmulatedShardedCluster;
import io.github.mongowriteguard.testkit.node.EmulatedNode;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.connect.errors.RetriableException;
import org.apache.kafka.connect.sink.SinkRecord;
import org.bson.BsonDocument;
import org.bson.Document;
import org.junit.jupiter.api.Test;

/**
 * A put that hands its batch back to Connect after some of its records applied, and the partition then moving to
 * another task (a rebalance): the new owner is delivered the whole batch again (Connect commits no part of a put) and
 * must leave out what the old owner applied.
 */
class ProgressHandOverTest {
    private static final TopicPartition T0 = new TopicPartition("t", 0);

    @Test
    void theNewOwner_leavesOutWhatTheOldOwnerApplied_beforeHandingTheBatchBack() throws Exception {
        try (EmulatedShardedCluster mongo = EmulatedCluster.sharded().shards(2).start();
                MongoClient client = MongoClients.create(mongo.connectionString())) {
            mongo.shardCollection("handover.events", ConnectHarness.HASHED_ID);
            List<SinkRecord> batch = new ArrayList<>();
            for (int k = 0; k < 20; k++) {
                batch.add(new SinkRecord("t", 0, null, "k" + k, null, Map.of("_id", "k" + k, "op", "inc", "n", 1), k));
            }
            // the shard that is not the database's primary (where the progress collection lives) refuses every update
            // before running it (not primary: nothing applied, safe to send again)
            String primary = client.getDatabase("config")
                    .getCollection("databases")
                    .find(new Document("_id", "handover"))
                    .first()
                    .getString("primary");
            EmulatedNode refusing = mongo.shard(mongo.shardNames().get(0).equals(primary) ? 1 : 0);
            refusing.failCommand()
                    .configure(BsonDocument.parse("{configureFailPoint: 'failCommand',"
                            + " mode: 'alwaysOn', data: {failCommands: ['update'], errorCode: 10107,"
                            + " failInternalCommands: true}}"));
            GuardedMongoSinkTask old = new GuardedMongoSinkTask();
            old.start(taskConfig(mongo.connectionString()));
            try {
                old.open(List.of(T0));
                assertThatThrownBy(() -> old.put(batch)).isInstanceOf(RetriableException.class);
                old.close(List.of(T0)); // the rebalance takes the partition away
            } finally {
                old.stop();
                refusing.failCommand().off();
            }
            long appliedByOld = counts(client).size();
            assertThat(appliedByOld).isBetween(1L, 19L);

            GuardedMongoSinkTask next = new GuardedMongoSinkTask();
            next.start(taskConfig(mongo.connectionString()));
            try {
                next.open(List.of(T0));
                next.put(batch); // Connect delivers the batch again, from the last committed offset
            } finally {
                next.stop();
            }
            Map<String, Integer> counts = counts(client);
            assertThat(counts).hasSize(20);
            assertThat(counts.values()).as("each $inc applied once").containsOnly(1);
            assertThat(client.getDatabase("handover")
                            .getCollection(ProgressStore.COLLECTION)
                            .countDocuments())
                    .as("the progress is removed once the batch completed")
                    .isZero();
        }
    }

    private static Map<String, String> taskConfig(String uri) {
        Map<String, String> config = ConnectHarness.taskConfig(uri, "handover");
        config.put(GuardedSinkSettings.RETRY_MAX_ATTEMPTS, "1");
        config.put(GuardedSinkSettings.SETTLE_MAX_WAIT_MS, "300");
        return config;
    }

    private static Map<String, Integer> counts(MongoClient client) {
        Map<String, Integer> counts = new HashMap<>();
        for (Document d : client.getDatabase("handover").getCollection("events").find()) {
            counts.put(d.getString("_id"), ((Number) d.get("n")).intValue());
        }
        return counts;
    }
}
