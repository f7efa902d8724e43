package io.github.mongowriteguard.samples.plain;

import static org.assertj.core.api.Assertions.assertThat;

import com.mongodb.MongoClientSettings;
import com.mongodb.client.MongoClient;
import com.mongodb.client.MongoClients;
import com.mongodb.client.model.Filters;
import com.mongodb.client.model.InsertOneModel;
import com.mongodb.client.model.UpdateOneModel;
import com.mongodb.client.model.Updates;
import com.mongodb.client.model.WriteModel;
import io.github.mongowriteguard.GuardedCollection;
import io.github.mongowriteguard.WriteGuard;
import io.github.mongowriteguard.outcome.WriteStatus;
import io.github.mongowriteguard.samples.plain.OutcomeHandling.Action;
import io.github.mongowriteguard.samples.plain.OutcomeHandling.Decision;
import io.github.mongowriteguard.test.EmulatedMongo;
import io.github.mongowriteguard.test.EmulatedMongoCluster;
import io.github.mongowriteguard.test.EmulatedMongoExtension;
import java.util.List;
import org.bson.BsonDocument;
import org.bson.Document;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * The README's consumer recipe on the emulated replica set, through the plain JUnit 5 extension: each status leads
 * to its action, and a dead-letter keeps the status, the error and {@code retrySafe()} that {@code notApplied()}
 * would have dropped.
 */
@ExtendWith(EmulatedMongoExtension.class)
@EmulatedMongo(options = "socketTimeoutMS=600")
class OutcomeHandlingTest {
    private final WriteGuard guard = WriteGuard.create();
    private MongoClient client;
    private GuardedCollection<Document> orders;

    @BeforeEach
    void connect(EmulatedMongoCluster mongo) {
        client = MongoClients.create(
                guard.configure(MongoClientSettings.builder().applyConnectionString(mongo.connectionString()))
                        .build());
        client.getDatabase("shop").getCollection("orders").drop();
        orders = guard.guardCollection(client, client.getDatabase("shop").getCollection("orders"));
    }

    @AfterEach
    void close(EmulatedMongoCluster mongo) {
        mongo.replicaSet().primary().failCommand().off();
        client.close();
    }

    @Test
    void appliedIsAcked_aDuplicateIsDeadLettered_andTheWriteItStoppedIsResentNow() {
        orders.insertOne(new Document("_id", 1));
        List<WriteModel<Document>> records = List.of(
                new InsertOneModel<>(new Document("_id", 1)), // duplicate key: fails for good
                new UpdateOneModel<>(Filters.eq("_id", 1), Updates.set("paid", true)), // same key: skipped
                new InsertOneModel<>(new Document("_id", 2)));

        List<Decision> decisions = OutcomeHandling.write(orders, records);

        assertThat(decisions)
                .extracting(Decision::action)
                .containsExactly(Action.DEAD_LETTER, Action.RESEND_NOW, Action.ACK);
        assertThat(decisions.get(0).status()).isEqualTo(WriteStatus.FAILED);
        assertThat(decisions.get(0).retrySafe()).isFalse();
        assertThat(decisions.get(0).reason()).contains("DuplicateKey").contains("11000");
        assertThat(decisions.get(1).status()).isEqualTo(WriteStatus.SKIPPED);
        assertThat(decisions.get(1).reason()).contains("because of write 0");
    }

    @Test
    void unknownOutcomes_idempotentIsResentLater_anIncrementIsDeadLettered(EmulatedMongoCluster mongo) {
        orders.insertOne(new Document("_id", 5).append("n", 0));
        orders.insertOne(new Document("_id", 6).append("n", 0));
        // Every update command loses its connection: the guard cannot learn whether it applied.
        mongo.replicaSet()
                .primary()
                .failCommand()
                .configure(BsonDocument.parse("{configureFailPoint: 'failCommand', mode: 'alwaysOn',"
                        + " data: {failCommands: ['update'], closeConnection: true}}"));

        List<Decision> decisions = OutcomeHandling.write(
                orders,
                List.of(
                        new UpdateOneModel<>(Filters.eq("_id", 5), Updates.set("paid", true)),
                        new UpdateOneModel<>(Filters.eq("_id", 6), Updates.inc("n", 1))));

        assertThat(decisions).extracting(Decision::status).containsOnly(WriteStatus.UNKNOWN);
        assertThat(decisions.get(0).action()).isEqualTo(Action.RESEND_LATER);
        assertThat(decisions.get(0).retrySafe()).isTrue();
        assertThat(decisions.get(1).action()).isEqualTo(Action.DEAD_LETTER);
        assertThat(decisions.get(1).retrySafe()).isFalse();
        assertThat(decisions.get(1).reason()).contains("could apply it twice");
    }
}
