package io.github.mongowriteguard.testkit.sharding;

import static org.assertj.core.api.Assertions.assertThat;

import com.mongodb.client.MongoClient;
import com.mongodb.client.MongoClients;
import com.mongodb.client.MongoCollection;
import com.mongodb.client.model.Filters;
import io.github.mongowriteguard.testkit.EmulatedCluster;
import io.github.mongowriteguard.testkit.EmulatedShardedCluster;
import java.util.ArrayList;
import java.util.List;
import org.bson.BsonDocument;
import org.bson.BsonString;
import org.bson.Document;
import org.bson.types.ObjectId;
import org.junit.jupiter.api.Test;

/**
 * An insert command whose documents have no {@code _id}, sent as it is (the drivers add one; a raw command need not):
 * mongos gives each an ObjectId, as its first field, before targeting (mongodb/mongo
 * {@code src/mongo/s/commands/cluster_write_cmd.cpp}, {@code BatchedCommandRequest::cloneInsertWithIds} in
 * {@code src/mongo/s/write_ops/batched_command_request.cpp}), so on a collection sharded on {@code _id} each lands on
 * the shard owning its {@code _id} and a targeted read finds it.
 */
class InsertsWithoutIdThroughMongosTest {

    @Test
    void documentsWithoutId_getAnObjectIdAtMongos_andLiveOnTheShardOwningIt() {
        try (EmulatedShardedCluster cluster =
                        EmulatedCluster.sharded().shards(5).start();
                MongoClient client = MongoClients.create(cluster.connectionString())) {
            cluster.shardCollection("w.c", ShardKey.of(new BsonDocument("_id", new BsonString("hashed"))));
            List<Document> documents = new ArrayList<>();
            for (int i = 0; i < 50; i++) {
                documents.add(new Document("n", i));
            }

            Document reply =
                    client.getDatabase("w").runCommand(new Document("insert", "c").append("documents", documents));

            assertThat(reply.getInteger("n")).isEqualTo(50);
            MongoCollection<Document> collection = client.getDatabase("w").getCollection("c");
            List<Document> stored = collection.find().into(new ArrayList<>());
            assertThat(stored).hasSize(50).allSatisfy(document -> {
                assertThat(document.keySet().iterator().next()).isEqualTo("_id");
                assertThat(document.get("_id")).isInstanceOf(ObjectId.class);
                // A read targeted by _id reaches the owning shard only: it finds the document there.
                assertThat(collection
                                .find(Filters.eq("_id", document.get("_id")))
                                .first())
                        .isEqualTo(document);
            });
            assertThat(cluster.routing().last().childBatchesPerShard()).hasSizeGreaterThan(1);
        }
    }
}
