package io.github.mongowriteguard;

import static org.assertj.core.api.Assertions.assertThat;

import com.mongodb.client.MongoCollection;
import com.mongodb.client.model.BulkWriteOptions;
import com.mongodb.client.model.DeleteOneModel;
import com.mongodb.client.model.Filters;
import com.mongodb.client.model.InsertOneModel;
import com.mongodb.client.model.ReplaceOneModel;
import com.mongodb.client.model.ReplaceOptions;
import com.mongodb.client.model.UpdateOneModel;
import com.mongodb.client.model.Updates;
import com.mongodb.client.model.WriteModel;
import io.github.mongowriteguard.outcome.WriteOutcome;
import io.github.mongowriteguard.outcome.WriteStatus;
import io.github.mongowriteguard.testkit.EmulatedCluster;
import io.github.mongowriteguard.testkit.EmulatedReplicaSet;
import java.util.ArrayList;
import java.util.List;
import org.bson.BsonDocument;
import org.bson.BsonString;
import org.bson.Document;
import org.junit.jupiter.api.Test;

/**
 * A round's write commands are encoded one at a time into one reused buffer: each command, and every resend of its
 * copy, must be sent before the next command is written over it. A retryable failure on a command whose buffer held
 * the command before it is resent with the same statements, and the command after it is intact.
 */
class ReusedCommandBufferResendTest {

    @Test
    void commandResentAfterARetryableError_carriesTheSameStatements_andTheNextCommandIsIntact() {
        for (boolean ordered : new boolean[] {true, false}) {
            try (EmulatedReplicaSet cluster = EmulatedCluster.replicaSet().start();
                    GuardFixture fixture = new GuardFixture(cluster.connectionString(), 10_000)) {
                MongoCollection<Document> raw = fixture.client.getDatabase("r").getCollection("c");
                MongoCollection<Document> plain =
                        fixture.client.getDatabase("r").getCollection("plain");
                for (MongoCollection<Document> collection : List.of(raw, plain)) {
                    collection.insertMany(List.of(new Document("_id", 100), new Document("_id", 101)));
                }
                // Four commands in one round (inserts, updates, replacements, deletes), the buffer of each written
                // over by the next: a large one first, so the update command after it reuses a large buffer.
                List<WriteModel<Document>> models = List.of(
                        new InsertOneModel<>(new Document("_id", 1).append("big", "x".repeat(256 * 1024))),
                        new InsertOneModel<>(new Document("_id", 2).append("big", "y".repeat(64 * 1024))),
                        new UpdateOneModel<>(Filters.eq("_id", 100), Updates.set("u", 1)),
                        new UpdateOneModel<>(Filters.eq("_id", 101), Updates.set("u", 2)),
                        new ReplaceOneModel<>(
                                Filters.eq("_id", 3),
                                new Document("_id", 3).append("r", "z".repeat(128 * 1024)),
                                new ReplaceOptions().upsert(true)),
                        new DeleteOneModel<>(Filters.eq("_id", 2)));
                fixture.failOnceRetryably("update");

                WriteOutcome<Document> outcome =
                        fixture.wrap(raw).execute(models, new BulkWriteOptions().ordered(ordered));
                plain.bulkWrite(models, new BulkWriteOptions().ordered(ordered));

                assertThat(outcome.outcomes()).allMatch(o -> o.status() == WriteStatus.APPLIED);
                assertThat(raw.find().sort(new Document("_id", 1)).into(new ArrayList<>()))
                        .isEqualTo(plain.find().sort(new Document("_id", 1)).into(new ArrayList<>()));
                List<BsonDocument> updates = fixture.sent.stream()
                        .filter(c -> c.getString("update", new BsonString(""))
                                .getValue()
                                .equals("c"))
                        .toList();
                assertThat(updates).hasSize(3); // the failed send, its resend, the replacement
                assertThat(updates.get(1).get("txnNumber"))
                        .isEqualTo(updates.get(0).get("txnNumber"));
                assertThat(updates.get(1).getArray("updates"))
                        .isEqualTo(updates.get(0).getArray("updates"))
                        .hasSize(2);
                assertThat(updates.get(0).getArray("updates").get(1).asDocument())
                        .isEqualTo(BsonDocument.parse("{q: {_id: 101}, u: {$set: {u: 2}}}"));
                assertThat(updates.get(2)
                                .getArray("updates")
                                .get(0)
                                .asDocument()
                                .getDocument("u"))
                        .isEqualTo(new Document("_id", 3)
                                .append("r", "z".repeat(128 * 1024))
                                .toBsonDocument());
                BsonDocument delete = fixture.sent.stream()
                        .filter(c -> c.getString("delete", new BsonString(""))
                                .getValue()
                                .equals("c"))
                        .findFirst()
                        .orElseThrow();
                assertThat(delete.getArray("deletes").get(0).asDocument())
                        .isEqualTo(BsonDocument.parse("{q: {_id: 2}, limit: 1}"));
            }
        }
    }

    @Test
    void largeInsertsHandedToTheDriverAsTrees_resentAfterARetryableError_carryTheSameDocuments() {
        try (EmulatedReplicaSet cluster = EmulatedCluster.replicaSet().start();
                GuardFixture fixture = new GuardFixture(cluster.connectionString(), 10_000)) {
            MongoCollection<Document> raw = fixture.client.getDatabase("r").getCollection("c");
            MongoCollection<Document> plain = fixture.client.getDatabase("r").getCollection("plain");
            // Three 6 MiB documents: two insert commands (16 MiB holds two), each of statement trees the driver
            // encodes; the first fails once with a retryable error and is resent as the same copy.
            byte[] payload = new byte[6 * 1024 * 1024];
            new java.util.Random(3).nextBytes(payload);
            List<WriteModel<Document>> models = new ArrayList<>();
            for (int i = 0; i < 3; i++) {
                models.add(new InsertOneModel<>(new Document("n", i)
                        .append("p", new org.bson.types.Binary(i == 1 ? (byte) 0x80 : (byte) 0, payload))
                        .append("_id", i)));
            }
            fixture.failOnceRetryably("insert");

            WriteOutcome<Document> outcome = fixture.wrap(raw).execute(models, new BulkWriteOptions().ordered(false));
            plain.bulkWrite(models, new BulkWriteOptions().ordered(false));

            assertThat(outcome.outcomes()).allMatch(o -> o.status() == WriteStatus.APPLIED);
            assertThat(raw.find().sort(new Document("_id", 1)).into(new ArrayList<>()))
                    .isEqualTo(plain.find().sort(new Document("_id", 1)).into(new ArrayList<>()));
            List<BsonDocument> inserts = fixture.sent.stream()
                    .filter(c ->
                            c.getString("insert", new BsonString("")).getValue().equals("c"))
                    .toList();
            assertThat(inserts).hasSize(3); // the failed send, its resend, the second command
            assertThat(inserts.get(1).get("txnNumber")).isEqualTo(inserts.get(0).get("txnNumber"));
            assertThat(inserts.get(1).getArray("documents"))
                    .isEqualTo(inserts.get(0).getArray("documents"))
                    .hasSize(2);
            assertThat(inserts.get(2).getArray("documents")).hasSize(1);
            assertThat(inserts.get(0).getArray("documents").get(0).asDocument().getFirstKey())
                    .isEqualTo("_id");
        }
    }
}
