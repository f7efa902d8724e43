package io.github.mongowriteguard.outcome;

import static org.assertj.core.api.Assertions.assertThat;

import com.mongodb.ConnectionString;
import com.mongodb.MongoClientSettings;
import com.mongodb.client.MongoClient;
import com.mongodb.client.MongoClients;
import com.mongodb.client.MongoCollection;
import com.mongodb.client.model.BulkWriteOptions;
import com.mongodb.client.model.Filters;
import com.mongodb.client.model.UpdateManyModel;
import com.mongodb.client.model.Updates;
import io.github.mongowriteguard.GuardedCollection;
import io.github.mongowriteguard.WriteGuard;
import io.github.mongowriteguard.testkit.EmulatedCluster;
import io.github.mongowriteguard.testkit.EmulatedShardedCluster;
import io.github.mongowriteguard.testkit.sharding.ShardKey;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.bson.BsonDocument;
import org.bson.BsonString;
import org.bson.Document;
import org.junit.jupiter.api.Test;

/**
 * A multi-document write is not atomic: an {@code updateMany} that fails on one shard has applied on the others
 * (mongos adds the shards' counts and reports the failing shard's error, {@code BatchWriteOp::buildClientResponse}).
 * The outcome must not say "not applied".
 */
class MultiDocumentOutcomeTest {

    @Test
    void updateManyFailingOnOneShard_isFailedButMayHaveChangedDocuments_withTheOtherShardsCounts() {
        WriteGuard guard = WriteGuard.create();
        try (EmulatedShardedCluster cluster =
                        EmulatedCluster.sharded().shards(3).start();
                MongoClient client = MongoClients.create(guard.configure(MongoClientSettings.builder()
                                .applyConnectionString(new ConnectionString(cluster.connectionString()))
                                .applyToSocketSettings(s -> s.readTimeout(5, TimeUnit.SECONDS)))
                        .build())) {
            cluster.shardCollection("multi.counters", ShardKey.of(new BsonDocument("_id", new BsonString("hashed"))));
            MongoCollection<Document> counters = client.getDatabase("multi").getCollection("counters");
            List<Document> documents = new ArrayList<>();
            for (int i = 0; i < 12; i++) {
                documents.add(new Document("_id", i).append("group", "g").append("n", i == 7 ? "not a number" : 0));
            }
            counters.insertMany(documents);
            GuardedCollection<Document> guarded = guard.guardCollection(client, counters);

            WriteOutcome<Document> outcome = guarded.execute(
                    List.of(new UpdateManyModel<>(Filters.eq("group", "g"), Updates.inc("n", 1))),
                    new BulkWriteOptions());

            long changed = counters.countDocuments(Filters.eq("n", 1));
            assertThat(changed)
                    .as("documents the updateMany changed on the shards that did not fail")
                    .isPositive();
            IndexOutcome result = outcome.outcome(0);
            assertThat(result.status()).isEqualTo(WriteStatus.FAILED);
            assertThat(result.errorCode()).isEqualTo(14);
            assertThat(result.mayHaveChangedDocuments()).isTrue();
            assertThat(result.retrySafe()).isFalse();
            assertThat(outcome.modifiedCount()).as("the counts mongos reported").isGreaterThanOrEqualTo((int)
                    Math.min(changed, 1));
        }
    }
}
