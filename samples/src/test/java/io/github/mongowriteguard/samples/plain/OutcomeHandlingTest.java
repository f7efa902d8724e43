package io.github.mongowriteguard.samples.plain;

import static org.assertj.core.api.Assertions.assertThat;

import com.mongodb.MongoClientSettings;
import com.mongodb.client.MongoClient;
import com.mongodb.client.MongoClients;
import com.mongodb.client.MongoCollection;
import com.mongodb.client.model.Filters;
import com.mongodb.client.model.InsertOneModel;
import com.mongodb.client.model.ReplaceOneModel;
import com.mongodb.client.model.UpdateOneModel;
import com.mongodb.client.model.Updates;
import com.mongodb.client.model.WriteModel;
import io.github.mongowriteguard.GuardedCollection;
import io.github.mongowriteguard.WriteGuard;
import io.github.mongowriteguard.outcome.WriteStatus;
import io.github.mongowriteguard.samples.plain.OutcomeHandling.Action;
import io.github.mongowriteguard.samples.plain.OutcomeHandling.Decision;
import io.github.mongowriteguard.samples.plain.OutcomeHandling.Written;
import io.github.mongowriteguard.test.EmulatedMongo;
import io.github.mongowriteguard.test.EmulatedMongoCluster;
import io.github.mongowriteguard.test.EmulatedMongoExtension;
import io.github.mongowriteguard.testkit.stall.Stall;
import io.github.mongowriteguard.testkit.stall.StallHandle;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import org.bson.BsonDocument;
import org.bson.Document;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * The README's consumer recipe on the emulated replica set, through the plain JUnit 5 extension, followed to the end
 * under faults (a lost reply, a write-concern error, a stall, connections closed): settle first, acknowledge what
 * settled APPLIED, send again what was held back, dead-letter only what failed for good; nothing lost, nothing
 * applied twice.
 */
@ExtendWith(EmulatedMongoExtension.class)
@EmulatedMongo(options = "socketTimeoutMS=600")
class OutcomeHandlingTest {
    private final WriteGuard guard = WriteGuard.create();
    private MongoClient client;
    private GuardedCollection<Document> orders;
    private MongoCollection<Document> raw;

    @BeforeEach
    void connect(EmulatedMongoCluster mongo) {
        client = MongoClients.create(
                guard.configure(MongoClientSettings.builder().applyConnectionString(mongo.connectionString()))
                        .build());
        raw = client.getDatabase("shop").getCollection("orders");
        raw.drop();
        orders = guard.guardCollection(client, raw);
    }

    @AfterEach
    void close(EmulatedMongoCluster mongo) {
        mongo.replicaSet().primary().failCommand().off();
        mongo.replicaSet().primary().stopLosingReplies();
        client.close();
    }

    /** The recipe's own loop: what it says to send now is sent now, until nothing is left to send. */
    private List<Decision> follow(List<WriteModel<Document>> records) {
        Written<Document> written = OutcomeHandling.write(orders, records);
        List<WriteModel<Document>> now = new ArrayList<>();
        for (Decision d : written.decisions()) {
            if (d.action() == Action.RESEND_NOW) {
                now.add(records.get(d.index()));
            }
        }
        if (!now.isEmpty()) {
            assertThat(OutcomeHandling.write(orders, now).decisions())
                    .extracting(Decision::action)
                    .containsOnly(Action.ACK);
        }
        return written.decisions();
    }

    @Test
    void appliedIsAcked_aDuplicateIsDeadLettered_andTheWriteItStoppedIsResentNow() {
        orders.insertOne(new Document("_id", 1));
        List<WriteModel<Document>> records = List.of(
                new InsertOneModel<>(new Document("_id", 1)), // duplicate key: fails for good
                new UpdateOneModel<>(Filters.eq("_id", 1), Updates.set("paid", true)), // same key: skipped
                new InsertOneModel<>(new Document("_id", 2)));

        List<Decision> decisions = OutcomeHandling.write(orders, records).decisions();

        assertThat(decisions)
                .extracting(Decision::action)
                .containsExactly(Action.DEAD_LETTER, Action.RESEND_NOW, Action.ACK);
        assertThat(decisions.get(0).status()).isEqualTo(WriteStatus.FAILED);
        assertThat(decisions.get(0).retrySafe()).isFalse();
        assertThat(decisions.get(0).reason()).contains("DuplicateKey").contains("11000");
        assertThat(decisions.get(1).status()).isEqualTo(WriteStatus.SKIPPED);
        assertThat(decisions.get(1).reason()).contains("because of write 0");
    }

    /** Every answer of the call lost: UNKNOWN, then the recipe's settle proves both applied, the $inc once. */
    @Test
    void lostReplies_areSettledApplied_theIncOnce(EmulatedMongoCluster mongo) {
        raw.insertOne(new Document("_id", 5).append("n", 0));
        raw.insertOne(new Document("_id", 6).append("n", 0));
        // the guard's 3 sends of the command lose their answers; the settle's send gets one
        mongo.replicaSet().primary().loseReplies(3, "update");

        List<Decision> decisions = follow(List.of(
                new UpdateOneModel<>(Filters.eq("_id", 5), Updates.set("paid", true)),
                new UpdateOneModel<>(Filters.eq("_id", 6), Updates.inc("n", 1))));

        assertThat(decisions).extracting(Decision::action).containsOnly(Action.ACK);
        assertThat(raw.find(Filters.eq("_id", 5)).first().getBoolean("paid")).isTrue();
        assertThat(raw.find(Filters.eq("_id", 6)).first().getInteger("n")).isEqualTo(1);
    }

    /**
     * A write-concern error on a replacement whose {@code _id} a later {@code $inc} of the batch also writes: the
     * replacement settles APPLIED, the {@code $inc} was held back and is sent after it: 105, not 100.
     */
    @Test
    void aWriteConcernError_isSettled_andTheHeldBackIncIsSentAfter(EmulatedMongoCluster mongo) {
        raw.insertOne(new Document("_id", 1).append("qty", 0));
        mongo.replicaSet()
                .primary()
                .failCommand()
                .configure(BsonDocument.parse("{configureFailPoint: 'failCommand', mode: {times: 1},"
                        + " data: {failCommands: ['update'], writeConcernError: {code: 64, codeName:"
                        + " 'WriteConcernFailed', errmsg: 'waiting for replication timed out'}}}"));

        List<Decision> decisions = follow(List.of(
                new ReplaceOneModel<>(Filters.eq("_id", 1), new Document("qty", 100)),
                new UpdateOneModel<>(Filters.eq("_id", 1), Updates.inc("qty", 5))));

        assertThat(decisions).extracting(Decision::action).containsExactly(Action.ACK, Action.RESEND_NOW);
        assertThat(raw.find().first().getInteger("qty")).isEqualTo(105);
    }

    /**
     * A stall longer than the call: UNKNOWN, and the recipe's settle still waits behind the stalled copy: settle
     * later. Once the stall ends, settling again proves the $inc applied, once.
     */
    @Test
    void aStall_isSettledLater_theIncOnce(EmulatedMongoCluster mongo) throws Exception {
        raw.insertOne(new Document("_id", 7).append("n", 0));
        Written<Document> written;
        try (StallHandle stall =
                mongo.replicaSet().primary().stall(Stall.uninterruptible("shop.orders", Duration.ofSeconds(6)))) {
            written = OutcomeHandling.write(
                    orders, List.of(new UpdateOneModel<>(Filters.eq("_id", 7), Updates.inc("n", 1))));
        }
        assertThat(written.decisions()).extracting(Decision::action).containsExactly(Action.SETTLE_LATER);
        assertThat(mongo.replicaSet().truth().awaitIdle(c -> true, Duration.ofSeconds(10)))
                .isTrue();

        Written<Document> later = OutcomeHandling.settleAgain(orders, written.outcome());

        assertThat(later.decisions()).extracting(Decision::action).containsExactly(Action.ACK);
        assertThat(raw.find().first().getInteger("n")).isEqualTo(1);
    }

    /**
     * Every update's connection closed before it runs: UNKNOWN (the guard cannot know it did not run); the settle
     * too, so settle later; once the network is back the settle sends the same copies, which run once.
     */
    @Test
    void closedConnections_settleLater_thenAppliedOnce(EmulatedMongoCluster mongo) {
        raw.insertOne(new Document("_id", 5).append("n", 0));
        raw.insertOne(new Document("_id", 6).append("n", 0));
        mongo.replicaSet()
                .primary()
                .failCommand()
                .configure(BsonDocument.parse("{configureFailPoint: 'failCommand', mode: 'alwaysOn',"
                        + " data: {failCommands: ['update'], closeConnection: true}}"));

        Written<Document> written = OutcomeHandling.write(
                orders,
                List.of(
                        new UpdateOneModel<>(Filters.eq("_id", 5), Updates.set("paid", true)),
                        new UpdateOneModel<>(Filters.eq("_id", 6), Updates.inc("n", 1))));

        assertThat(written.decisions()).extracting(Decision::status).containsOnly(WriteStatus.UNKNOWN);
        assertThat(written.decisions()).extracting(Decision::action).containsOnly(Action.SETTLE_LATER);
        assertThat(written.decisions().get(1).retrySafe()).isFalse();
        mongo.replicaSet().primary().failCommand().off();

        Written<Document> later = OutcomeHandling.settleAgain(orders, written.outcome());

        assertThat(later.decisions()).extracting(Decision::action).containsOnly(Action.ACK);
        assertThat(raw.find(Filters.eq("_id", 6)).first().getInteger("n")).isEqualTo(1);
    }
}
