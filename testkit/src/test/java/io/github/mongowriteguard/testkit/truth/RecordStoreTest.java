package io.github.mongowriteguard.testkit.truth;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.mongodb.client.MongoClient;
import com.mongodb.client.MongoCollection;
import io.github.mongowriteguard.testkit.Clients;
import io.github.mongowriteguard.testkit.EmulatedCluster;
import io.github.mongowriteguard.testkit.EmulatedReplicaSet;
import java.util.ArrayList;
import java.util.List;
import java.util.function.Function;
import java.util.function.Predicate;
import org.bson.Document;
import org.junit.jupiter.api.Test;

/**
 * A node's truth holds a bounded number of write statements between resets (a small bound set through the seam, so a
 * case needs a handful of writes, not 250,000): a reset frees the bound, and counting copies per key from statements
 * the truth dropped throws rather than count too few.
 */
class RecordStoreTest {
    private static final Predicate<ReceivedCommand> INSERTS =
            c -> c.commandName().equals("insert");
    private static final Function<ReceivedCommand, List<String>> IDS = c ->
            c.statements().stream().map(s -> s.body().get("_id").toString()).toList();

    @Test
    void reset_freesTheBound_soEveryRoundOfALongLivedDeploymentIsRecorded() {
        try (EmulatedReplicaSet cluster = EmulatedCluster.replicaSet().start();
                MongoClient client = Clients.client(cluster.connectionString())) {
            ServerTruth truth = cluster.truth();
            truth.maxStatementsKept(4);
            MongoCollection<Document> c = client.getDatabase("bound").getCollection("c");
            for (int round = 0; round < 3; round++) {
                c.insertMany(documents("r" + round + ".", 4)); // fills the bound
                c.insertOne(new Document("_id", "r" + round + ".late")); // arrives while full

                List<ReceivedCommand> inserts = truth.commands(INSERTS);
                assertThat(inserts).as("round %d", round).hasSize(2);
                assertThat(inserts.get(0).statementsDropped())
                        .as("round %d", round)
                        .isFalse();
                assertThat(IDS.apply(inserts.get(0)))
                        .as("round %d", round)
                        .containsExactly(
                                "BsonString{value='r" + round + ".0'}",
                                "BsonString{value='r" + round + ".1'}",
                                "BsonString{value='r" + round + ".2'}",
                                "BsonString{value='r" + round + ".3'}");
                assertThat(inserts.get(1).statementsDropped())
                        .as("round %d", round)
                        .isTrue();
                assertThat(inserts.get(1).documents()).isEqualTo(1);

                truth.reset();
                assertThat(truth.commands(INSERTS)).isEmpty();
            }
        }
    }

    @Test
    void copiesPerKeyFromStatements_throwAfterADrop_untilTheTruthIsReset() {
        try (EmulatedReplicaSet cluster = EmulatedCluster.replicaSet().start();
                MongoClient client = Clients.client(cluster.connectionString())) {
            ServerTruth truth = cluster.truth();
            truth.maxStatementsKept(2);
            MongoCollection<Document> c = client.getDatabase("bound").getCollection("c");
            c.insertMany(documents("a", 2));
            c.insertOne(new Document("_id", "dropped"));

            assertThatThrownBy(() -> truth.maxConcurrentCopiesPerKey(INSERTS, IDS))
                    .isInstanceOf(IllegalStateException.class)
                    .hasMessageContaining("dropped the write statements")
                    .hasMessageContaining("reset the truth between measurements");
            assertThatThrownBy(() -> ServerTruth.maxConcurrentCopiesPerKey(truth.commands(INSERTS), IDS))
                    .isInstanceOf(IllegalStateException.class);
            // Counts that do not read statements stay whole.
            assertThat(truth.copies(INSERTS)).hasSize(2);
            assertThat(truth.maxConcurrentCopies(INSERTS)).isEqualTo(1);

            truth.reset();
            c.insertOne(new Document("_id", "after"));
            assertThat(truth.maxConcurrentCopiesPerKey(INSERTS, IDS))
                    .isEqualTo(new ServerTruth.CopiesAtOnce(1, "BsonString{value='after'}"));
        }
    }

    @Test
    void theBoundCountsTheStatementsHeldNow_aRunningCommandKeepsItsShareAcrossAReset() {
        RecordStore store = (RecordStore) ServerTruth.newStore();
        store.maxStatements(5);
        ServerTruth truth = new ServerTruth(store);
        CommandRecord running = record(1, 3);
        store.add(running);
        CommandRecord ended = record(2, 2);
        store.add(ended);
        ended.end(ReceivedCommand.Outcome.OK, 0);
        assertThat(store.statementsHeld()).isEqualTo(5);
        CommandRecord refused = record(3, 1);
        store.add(refused);
        assertThat(refused.snapshot().statementsDropped()).isTrue();

        truth.reset();

        // Still running, both stay; the one kept without statements still says so.
        assertThat(store).containsExactly(running, refused);
        assertThat(store.statementsHeld()).isEqualTo(3);
        assertThatThrownBy(() -> refused.snapshot().statements()).isInstanceOf(IllegalStateException.class);
        CommandRecord fits = record(4, 2);
        store.add(fits);
        assertThat(fits.snapshot().statements()).hasSize(2);
        CommandRecord over = record(5, 1);
        store.add(over);
        assertThat(over.snapshot().statementsDropped()).isTrue();
        assertThatThrownBy(() -> over.snapshot().statements())
                .isInstanceOf(IllegalStateException.class)
                .hasMessageContaining("truth().reset()");
    }

    private static List<Document> documents(String prefix, int count) {
        List<Document> documents = new ArrayList<>();
        for (int i = 0; i < count; i++) {
            documents.add(new Document("_id", prefix + i));
        }
        return documents;
    }

    private static CommandRecord record(long opid, int statements) {
        List<WriteStatement> kept = new ArrayList<>();
        for (int i = 0; i < statements; i++) {
            kept.add(new WriteStatement(i, new org.bson.BsonDocument("_id", new org.bson.BsonInt32(i))));
        }
        return new CommandRecord(
                opid,
                "n",
                1,
                null,
                "db",
                "insert",
                "db.c",
                new TxnId("op:" + opid, null),
                null,
                null,
                statements,
                System.nanoTime(),
                kept);
    }
}
