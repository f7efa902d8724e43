package io.github.mongowriteguard;

import static org.assertj.core.api.Assertions.assertThat;

import com.mongodb.MongoNamespace;
import com.mongodb.client.ClientSession;
import com.mongodb.client.MongoClient;
import com.mongodb.client.MongoCollection;
import com.mongodb.client.model.Filters;
import com.mongodb.client.model.FindOneAndUpdateOptions;
import com.mongodb.client.model.InsertOneModel;
import com.mongodb.client.model.ReturnDocument;
import com.mongodb.client.model.UpdateOneModel;
import com.mongodb.client.model.Updates;
import com.mongodb.client.model.bulk.ClientNamespacedWriteModel;
import com.mongodb.event.CommandListener;
import com.mongodb.event.CommandStartedEvent;
import io.github.mongowriteguard.testkit.EmulatedCluster;
import io.github.mongowriteguard.testkit.EmulatedReplicaSet;
import io.github.mongowriteguard.testkit.EmulatedShardedCluster;
import io.github.mongowriteguard.testkit.server.ServerVersion;
import io.github.mongowriteguard.testkit.sharding.ChunkMap;
import io.github.mongowriteguard.testkit.sharding.ShardKey;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Function;
import org.bson.BsonDocument;
import org.bson.BsonInt32;
import org.bson.Document;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * Guarded writes inside {@code ClientSession.withTransaction} on the emulator's multi-document transactions (testkit
 * {@code Transactions}: snapshot isolation, WriteConflict with TransientTransactionError), side by side with the same
 * calls through the raw driver on a twin database: the same results, the same documents after commit or abort, the
 * same exception types, the same number of attempts when a TransientTransactionError makes withTransaction retry; and
 * on the wire the guard adds nothing to a transaction's statements (no maxTimeMS, the transaction's own txnNumber).
 */
class GuardedTransactionTest {

    /** The writes of one transaction on one database: the raw driver's or the guard's. */
    private interface Writes {
        List<Object> run(ClientSession session);
    }

    /**
     * Where the twins run: a replica set, or a sharded cluster of two shards through the emulated mongos (testkit
     * {@code RouterTransactions}) with each twin collection split at {@code _id} 1, so a transaction that writes
     * {@code _id} 0 and 1 has two write participants and commits by (simplified) two-phase commit.
     */
    enum Topology {
        REPLICA_SET,
        SHARDED
    }

    private static final class Twins implements AutoCloseable {
        final AutoCloseable deployment;
        final GuardFixture fixture;
        final List<BsonDocument> sent = new CopyOnWriteArrayList<>();

        Twins(ServerVersion version) {
            this(version, Topology.REPLICA_SET);
        }

        Twins(ServerVersion version, Topology topology) {
            String connectionString;
            if (topology == Topology.SHARDED) {
                EmulatedShardedCluster cluster = EmulatedCluster.sharded()
                        .shards(2)
                        .serverVersion(version)
                        .start();
                for (String db : List.of("raw", "guarded")) {
                    ShardKey key = cluster.shardCollection(
                                    db + ".c", ShardKey.of(new BsonDocument("_id", new BsonInt32(1))))
                            .key();
                    cluster.placeChunks(
                            db + ".c",
                            ChunkMap.splitAt(key, List.of(new BsonInt32(1)), List.of("shard00", "shard01"))
                                    .chunks());
                }
                deployment = cluster;
                connectionString = cluster.connectionString();
            } else {
                EmulatedReplicaSet set =
                        EmulatedCluster.replicaSet().serverVersion(version).start();
                deployment = set;
                connectionString = set.connectionString();
            }
            fixture = new GuardFixture(
                    connectionString,
                    WriteGuardSettings.defaults(),
                    5_000,
                    b -> b.addCommandListener(new CommandListener() {
                        @Override
                        public void commandStarted(CommandStartedEvent event) {
                            if (event.getCommand().containsKey("autocommit")) {
                                sent.add(event.getCommand().clone());
                            }
                        }
                    }));
        }

        MongoClient client() {
            return fixture.client;
        }

        MongoCollection<Document> raw(String db) {
            return fixture.client.getDatabase(db).getCollection("c");
        }

        MongoCollection<Document> write(String db) {
            MongoCollection<Document> raw = raw(db);
            return db.equals("guarded") ? fixture.wrap(raw).asMongoCollection() : raw;
        }

        List<Document> documents(String db) {
            return raw(db).find().sort(new Document("_id", 1)).into(new ArrayList<>());
        }

        @Override
        public void close() {
            fixture.close();
            try {
                deployment.close();
            } catch (Exception e) {
                throw new IllegalStateException(e);
            }
        }
    }

    /** The statements of one transaction, on the database {@code db}; {@code onFirstAttempt} runs before the last write. */
    private static List<Object> statements(Twins twins, String db, ClientSession session) {
        MongoCollection<Document> c = twins.write(db);
        List<Object> results = new ArrayList<>();
        results.add(c.bulkWrite(
                session,
                List.of(
                        new InsertOneModel<>(new Document("_id", 1).append("v", 1)),
                        new UpdateOneModel<>(Filters.eq("_id", 0), Updates.inc("v", 1)))));
        results.add(c.insertOne(session, new Document("_id", 2)));
        results.add(c.updateOne(session, Filters.eq("_id", 2), Updates.set("w", 3)));
        results.add(c.findOneAndUpdate(
                session,
                Filters.eq("_id", 1),
                Updates.inc("v", 5),
                new FindOneAndUpdateOptions().returnDocument(ReturnDocument.AFTER)));
        results.add(c.find(session).sort(new Document("_id", 1)).into(new ArrayList<>()));
        return results;
    }

    private static Object outcome(Twins twins, String db, Function<ClientSession, Object> transaction) {
        twins.raw(db).insertOne(new Document("_id", 0).append("v", 0));
        try (ClientSession session = twins.client().startSession()) {
            return transaction.apply(session);
        } catch (RuntimeException e) {
            return e.getClass();
        }
    }

    @ParameterizedTest
    @EnumSource(Topology.class)
    void withTransaction_commitsTheGuardedWritesExactlyAsTheDriver_andTheGuardAddsNothingToTheStatements(
            Topology topology) {
        try (Twins twins = new Twins(ServerVersion.V7_0, topology)) {
            Object raw =
                    outcome(twins, "raw", session -> session.withTransaction(() -> statements(twins, "raw", session)));
            int rawStatements = twins.sent.size();
            Object guarded = outcome(
                    twins, "guarded", session -> session.withTransaction(() -> statements(twins, "guarded", session)));

            assertThat(guarded).isEqualTo(raw);
            assertThat(twins.documents("guarded"))
                    .isEqualTo(twins.documents("raw"))
                    .hasSize(3);
            List<BsonDocument> guardedSent = twins.sent.subList(rawStatements, twins.sent.size());
            assertThat(guardedSent).hasSize(rawStatements).allSatisfy(command -> {
                assertThat(command.containsKey("maxTimeMS"))
                        .as("no guard deadline in a transaction")
                        .isFalse();
                assertThat(command.containsKey("writeConcern")
                                && !command.getFirstKey().equals("commitTransaction"))
                        .isFalse();
                assertThat(command.get("txnNumber"))
                        .isEqualTo(guardedSent.get(0).get("txnNumber"));
            });
            assertThat(guardedSent.stream().map(BsonDocument::getFirstKey).toList())
                    .isEqualTo(twins.sent.subList(0, rawStatements).stream()
                            .map(BsonDocument::getFirstKey)
                            .toList());
        }
    }

    @ParameterizedTest
    @EnumSource(Topology.class)
    void anExceptionInTheCallbackAborts_andAWriteErrorInsideFailsTheSameWay(Topology topology) {
        try (Twins twins = new Twins(ServerVersion.V7_0, topology)) {
            for (String db : List.of("raw", "guarded")) {
                Object thrown = outcome(
                        twins,
                        db,
                        session -> session.withTransaction(() -> {
                            statements(twins, db, session);
                            throw new IllegalStateException("the application gives up");
                        }));
                assertThat(thrown).as(db).isEqualTo(IllegalStateException.class);
            }
            assertThat(twins.documents("guarded"))
                    .isEqualTo(twins.documents("raw"))
                    .containsExactly(new Document("_id", 0).append("v", 0));

            List<Object> duplicate = new ArrayList<>();
            for (String db : List.of("raw", "guarded")) {
                try (ClientSession session = twins.client().startSession()) {
                    duplicate.add(
                            session.withTransaction(() -> twins.write(db).insertOne(session, new Document("_id", 0))));
                } catch (com.mongodb.MongoException e) {
                    // A statement's error aborts the transaction on the server; withTransaction aborts and rethrows it.
                    duplicate.add(e.getClass().getName() + " " + e.getCode());
                }
            }
            assertThat(duplicate.get(1)).isEqualTo(duplicate.get(0));
            assertThat(duplicate.get(0).toString()).contains("11000");
            assertThat(twins.documents("guarded"))
                    .isEqualTo(twins.documents("raw"))
                    .hasSize(1);
        }
    }

    @ParameterizedTest
    @EnumSource(Topology.class)
    void aWriteConflict_isATransientTransactionError_thatWithTransactionRetries_theSameForBoth(Topology topology) {
        try (Twins twins = new Twins(ServerVersion.V7_0, topology)) {
            List<Integer> attempts = new ArrayList<>();
            List<Object> results = new ArrayList<>();
            for (String db : List.of("raw", "guarded")) {
                AtomicInteger attempt = new AtomicInteger();
                results.add(outcome(
                        twins,
                        db,
                        session -> session.withTransaction(() -> {
                            MongoCollection<Document> c = twins.write(db);
                            // The first statement takes the snapshot; a committed write after it conflicts with the
                            // next one.
                            c.find(session, Filters.eq("_id", 0)).first();
                            if (attempt.incrementAndGet() == 1) {
                                twins.raw(db).updateOne(Filters.eq("_id", 0), Updates.set("outside", true));
                            }
                            return c.updateOne(session, Filters.eq("_id", 0), Updates.inc("v", 1));
                        })));
                attempts.add(attempt.get());
            }

            assertThat(attempts).containsExactly(2, 2);
            assertThat(results.get(1)).isEqualTo(results.get(0));
            assertThat(twins.documents("guarded"))
                    .isEqualTo(twins.documents("raw"))
                    .containsExactly(new Document("_id", 0).append("v", 1).append("outside", true));
        }
    }

    @ParameterizedTest
    @EnumSource(Topology.class)
    void clientBulkWriteInsideWithTransaction_onServer80_isTheDriversOwn(Topology topology) {
        try (Twins twins = new Twins(ServerVersion.V8_0, topology)) {
            GuardedClient guardedClient = twins.fixture.guard.guardClient(twins.fixture.client);
            List<Object> results = new ArrayList<>();
            for (String db : List.of("raw", "guarded")) {
                results.add(outcome(
                        twins,
                        db,
                        session -> session.withTransaction(() -> {
                            List<ClientNamespacedWriteModel> models = List.of(
                                    ClientNamespacedWriteModel.insertOne(
                                            new MongoNamespace(db, "c"), new Document("_id", 1)),
                                    ClientNamespacedWriteModel.updateOne(
                                            new MongoNamespace(db, "c"), Filters.eq("_id", 0), Updates.inc("v", 2)),
                                    ClientNamespacedWriteModel.insertOne(
                                            new MongoNamespace(db, "d"), new Document("_id", 1)));
                            var result = db.equals("raw")
                                    ? twins.client().bulkWrite(session, models)
                                    : guardedClient.bulkWrite(session, models);
                            return List.of(
                                    result.getInsertedCount(), result.getMatchedCount(), result.getModifiedCount());
                        })));
            }
            assertThat(results.get(1)).isEqualTo(results.get(0)).isEqualTo(List.of(2L, 1L, 1L));
            assertThat(twins.documents("guarded"))
                    .isEqualTo(twins.documents("raw"))
                    .hasSize(2);
            assertThat(twins.sent)
                    .filteredOn(command -> command.getFirstKey().equals("bulkWrite"))
                    .hasSize(2)
                    .allSatisfy(command ->
                            assertThat(command.containsKey("maxTimeMS")).isFalse());
        }
    }
}
