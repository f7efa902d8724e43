package io.github.mongowriteguard;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.mongodb.ClientBulkWriteException;
import com.mongodb.MongoNamespace;
import com.mongodb.client.ClientSession;
import com.mongodb.client.MongoClient;
import com.mongodb.client.model.Filters;
import com.mongodb.client.model.Updates;
import com.mongodb.client.model.bulk.ClientBulkWriteOptions;
import com.mongodb.client.model.bulk.ClientBulkWriteResult;
import com.mongodb.client.model.bulk.ClientNamespacedWriteModel;
import com.mongodb.client.model.bulk.ClientReplaceOneOptions;
import com.mongodb.client.model.bulk.ClientUpdateOneOptions;
import io.github.mongowriteguard.exception.WriteOutcomeUnknownException;
import io.github.mongowriteguard.outcome.WriteOutcome;
import io.github.mongowriteguard.outcome.WriteStatus;
import io.github.mongowriteguard.testkit.EmulatedCluster;
import io.github.mongowriteguard.testkit.EmulatedReplicaSet;
import io.github.mongowriteguard.testkit.EmulatedShardedCluster;
import io.github.mongowriteguard.testkit.server.ServerVersion;
import io.github.mongowriteguard.testkit.sharding.ShardKey;
import io.github.mongowriteguard.testkit.stall.Stall;
import io.github.mongowriteguard.testkit.stall.StallHandle;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Random;
import java.util.TreeMap;
import org.bson.BsonDocument;
import org.bson.BsonString;
import org.bson.Document;
import org.junit.jupiter.api.Test;

/**
 * The guarded client-level bulk ({@link GuardedClient}) against the raw driver's {@code MongoClient.bulkWrite} on
 * server 8.0's {@code bulkWrite} command (emulated), side by side on twin databases: the same seeded random bulks
 * (two namespaces, keyed and unkeyed writes, duplicate inserts, failing writes, upserts, ordered and unordered), the
 * driver run as the contract's oracle for each mode, compared document by document, count by count and error by
 * error. Then the guard's own promises.
 */
class ClientBulkWriteTest {
    private static final int BULKS_PER_TARGET = 150;
    private static final List<String> COLLECTIONS = List.of("a", "b");

    enum Mode {
        UNORDERED,
        ORDERED_KEYED,
        ORDERED_UNKEYED
    }

    enum Kind {
        INSERT,
        SET,
        INC,
        INC_STRING,
        REPLACE,
        DELETE,
        UPDATE_MANY,
        DELETE_MANY;

        boolean keyed() {
            return this != UPDATE_MANY && this != DELETE_MANY;
        }

        /** The collection-level request type the guard groups a round by. */
        int type() {
            return switch (this) {
                case INSERT -> 0;
                case REPLACE -> 2;
                case DELETE, DELETE_MANY -> 3;
                default -> 1;
            };
        }
    }

    record Op(String collection, Kind kind, int id, int value, boolean upsert) {
        ClientNamespacedWriteModel model(String db) {
            MongoNamespace ns = new MongoNamespace(db, collection);
            return switch (kind) {
                case INSERT -> ClientNamespacedWriteModel.insertOne(ns, new Document("_id", id).append("v", value));
                case SET ->
                    ClientNamespacedWriteModel.updateOne(
                            ns,
                            Filters.eq("_id", id),
                            Updates.set("v", value),
                            ClientUpdateOneOptions.clientUpdateOneOptions().upsert(upsert));
                case INC -> ClientNamespacedWriteModel.updateOne(ns, Filters.eq("_id", id), Updates.inc("v", value));
                case INC_STRING -> ClientNamespacedWriteModel.updateOne(ns, Filters.eq("_id", id), Updates.inc("s", 1));
                case REPLACE ->
                    ClientNamespacedWriteModel.replaceOne(
                            ns,
                            Filters.eq("_id", id),
                            new Document("v", value).append("s", "t"),
                            ClientReplaceOneOptions.clientReplaceOneOptions().upsert(upsert));
                case DELETE -> ClientNamespacedWriteModel.deleteOne(ns, Filters.eq("_id", id));
                case UPDATE_MANY ->
                    ClientNamespacedWriteModel.updateMany(ns, Filters.gte("v", value), Updates.set("w", value));
                case DELETE_MANY -> ClientNamespacedWriteModel.deleteMany(ns, Filters.eq("v", value));
            };
        }

        String key() {
            return kind.keyed() ? collection + ":" + id : null;
        }
    }

    record Bulk(Mode mode, List<Op> ops, boolean verbose) {
        List<ClientNamespacedWriteModel> models(String db, List<Integer> indices) {
            return indices.stream().map(i -> ops.get(i).model(db)).toList();
        }

        List<Integer> all() {
            List<Integer> all = new ArrayList<>();
            for (int i = 0; i < ops.size(); i++) {
                all.add(i);
            }
            return all;
        }
    }

    /**
     * What a call ended with: failed indices with their codes, the counts, and (verbose calls) each index's own result
     * as text, at the indices of the whole bulk.
     */
    record Result(Map<Integer, Integer> errors, List<Long> counts, Map<Integer, String> verbose) {}

    static Bulk bulk(long seed) {
        Random random = new Random(seed);
        Mode mode = Mode.values()[random.nextInt(3)];
        int size = 1 + random.nextInt(12);
        List<Op> ops = new ArrayList<>();
        for (int i = 0; i < size; i++) {
            Kind[] kinds = Kind.values();
            Kind kind = kinds[random.nextInt(mode == Mode.ORDERED_KEYED ? 6 : kinds.length)];
            ops.add(new Op(
                    COLLECTIONS.get(random.nextInt(2)),
                    kind,
                    random.nextInt(5),
                    random.nextInt(5),
                    random.nextBoolean()));
        }
        if (mode == Mode.ORDERED_UNKEYED
                && ops.stream().allMatch(op -> op.kind().keyed())) {
            ops.set(
                    random.nextInt(size),
                    new Op(COLLECTIONS.get(random.nextInt(2)), Kind.UPDATE_MANY, 0, random.nextInt(5), false));
        }
        return new Bulk(mode, ops, random.nextBoolean());
    }

    @Test
    void randomClientBulks_guardEqualsTheDriversOracle_onTheReplicaSet() {
        try (EmulatedReplicaSet cluster = EmulatedCluster.replicaSet()
                        .serverVersion(ServerVersion.V8_0)
                        .start();
                GuardFixture fixture = new GuardFixture(cluster.connectionString(), 5_000)) {
            differential(fixture, 1_000L);
        }
    }

    @Test
    void randomClientBulks_guardEqualsTheDriversOracle_throughMongos() {
        try (EmulatedShardedCluster cluster = EmulatedCluster.sharded()
                        .shards(3)
                        .serverVersion(ServerVersion.V8_0)
                        .start();
                GuardFixture fixture = new GuardFixture(cluster.connectionString(), 5_000)) {
            for (String db : List.of("g", "r")) {
                cluster.shardCollection(db + ".a", ShardKey.of(new BsonDocument("_id", new BsonString("hashed"))));
            }
            differential(fixture, 2_000L);
        }
    }

    private static void differential(GuardFixture fixture, long firstSeed) {
        GuardedClient guarded = fixture.guard.guardClient(fixture.client);
        Map<Mode, Integer> errors = new TreeMap<>();
        int sent = 0;
        int verboseBulks = 0;
        int verboseResults = 0;
        for (long seed = firstSeed; seed < firstSeed + BULKS_PER_TARGET; seed++) {
            Bulk bulk = bulk(seed);
            reset(fixture.client);
            ClientBulkWriteOptions options = ClientBulkWriteOptions.clientBulkWriteOptions()
                    .ordered(bulk.mode() != Mode.UNORDERED)
                    .verboseResults(bulk.verbose());
            fixture.sent.clear();
            Result guard = run(() -> guarded.bulkWrite(bulk.models("g", bulk.all()), options), bulk.all());
            assertThat(fixture.sent)
                    .as("seed " + seed)
                    .isNotEmpty()
                    .allSatisfy(command ->
                            assertThat(command).containsKey("maxTimeMS").containsKey("lsid"));
            sent += fixture.sent.size();
            if (bulk.verbose()) {
                verboseBulks++;
                assertThat(fixture.sent)
                        .as("seed " + seed + ": every update and delete alone in its command")
                        .filteredOn(command -> !command.containsKey("insert"))
                        .allSatisfy(command -> assertThat(
                                        command.getArray(command.containsKey("update") ? "updates" : "deletes"))
                                .hasSize(1));
            }
            Result oracle = oracle(fixture.client, bulk);
            String context = "seed " + seed + " " + bulk;
            assertThat(guard).as(context).isEqualTo(oracle);
            for (String collection : COLLECTIONS) {
                assertThat(documents(fixture.client, "g", collection))
                        .as(context + " " + collection)
                        .isEqualTo(documents(fixture.client, "r", collection));
            }
            verboseResults += guard.verbose().size();
            if (!guard.errors().isEmpty()) {
                errors.merge(bulk.mode(), 1, Integer::sum);
            }
        }
        assertThat(errors).as("bulks with write errors per mode").hasSize(3);
        assertThat(verboseBulks).as("verbose bulks").isBetween(BULKS_PER_TARGET / 4, BULKS_PER_TARGET * 3 / 4);
        assertThat(verboseResults).as("per-index results compared").isGreaterThan(verboseBulks);
        System.out.println(
                "client bulks: " + BULKS_PER_TARGET + " bulks (" + verboseBulks + " verbose, " + verboseResults
                        + " per-index results), " + sent
                        + " guarded commands, bulks with write errors " + errors);
    }

    /** The contract's oracle with the raw driver's client bulk on the twin database. */
    private static Result oracle(MongoClient client, Bulk bulk) {
        Map<Integer, Integer> errors = new TreeMap<>();
        Map<Integer, String> verbose = new TreeMap<>();
        long[] counts = new long[5];
        List<List<Integer>> calls = new ArrayList<>();
        boolean ordered = bulk.mode() != Mode.UNORDERED;
        if (bulk.mode() == Mode.ORDERED_UNKEYED) {
            calls.add(bulk.all());
        } else {
            Map<String, List<Integer>> byCollection = new LinkedHashMap<>();
            for (int i = 0; i < bulk.ops().size(); i++) {
                byCollection
                        .computeIfAbsent(bulk.ops().get(i).collection(), c -> new ArrayList<>())
                        .add(i);
            }
            for (List<Integer> indices : byCollection.values()) {
                Map<String, List<Integer>> byKey = new LinkedHashMap<>();
                List<Integer> unkeyed = new ArrayList<>();
                for (int i : indices) {
                    String key = bulk.ops().get(i).key();
                    if (key == null) {
                        unkeyed.add(i);
                    } else {
                        byKey.computeIfAbsent(key, k -> new ArrayList<>()).add(i);
                    }
                }
                if (ordered) {
                    calls.addAll(byKey.values()); // each key's writes as one ORDERED bulk
                    continue;
                }
                // Round k: the k-th run of every key (its consecutive writes of one request type, one command).
                Map<Integer, Integer> roundOf = new HashMap<>();
                int rounds = 0;
                for (List<Integer> writes : byKey.values()) {
                    int round = 0;
                    for (int position = 0; position < writes.size(); position++) {
                        if (position > 0
                                && bulk.ops().get(writes.get(position)).kind().type()
                                        != bulk.ops()
                                                .get(writes.get(position - 1))
                                                .kind()
                                                .type()) {
                            round++;
                        }
                        roundOf.put(writes.get(position), round);
                    }
                    rounds = Math.max(rounds, round + 1);
                }
                for (int round = 0; round < Math.max(rounds, unkeyed.isEmpty() ? 0 : 1); round++) {
                    List<Integer> members = new ArrayList<>(round == 0 ? unkeyed : List.of());
                    for (List<Integer> writes : byKey.values()) {
                        for (int index : writes) {
                            if (roundOf.get(index) == round) {
                                members.add(index);
                            }
                        }
                    }
                    members.sort(Comparator.naturalOrder());
                    // As the driver's collection-level UNORDERED bulk: grouped by type, in the order types first
                    // appear.
                    List<Integer> typeOrder = members.stream()
                            .map(i -> bulk.ops().get(i).kind().type())
                            .distinct()
                            .toList();
                    members.sort(Comparator.comparingInt(
                            i -> typeOrder.indexOf(bulk.ops().get(i).kind().type())));
                    calls.add(members);
                }
            }
        }
        for (List<Integer> call : calls) {
            Result part = run(
                    () -> client.bulkWrite(
                            bulk.models("r", call),
                            ClientBulkWriteOptions.clientBulkWriteOptions()
                                    .ordered(ordered)
                                    .verboseResults(bulk.verbose())),
                    call);
            errors.putAll(part.errors());
            verbose.putAll(part.verbose());
            for (int i = 0; i < 5; i++) {
                counts[i] += part.counts().get(i);
            }
        }
        return new Result(errors, List.of(counts[0], counts[1], counts[2], counts[3], counts[4]), verbose);
    }

    private static Result run(java.util.function.Supplier<ClientBulkWriteResult> call, List<Integer> indices) {
        Map<Integer, Integer> errors = new TreeMap<>();
        ClientBulkWriteResult result;
        try {
            result = call.get();
        } catch (ClientBulkWriteException e) {
            assertThat(e.getCause()).as("no command error expected").isNull();
            e.getWriteErrors().forEach((index, error) -> errors.put(indices.get(index), error.getCode()));
            result = e.getPartialResult().orElse(null);
        }
        List<Long> counts = result == null
                ? List.of(0L, 0L, 0L, 0L, 0L)
                : List.of(
                        result.getInsertedCount(),
                        result.getUpsertedCount(),
                        result.getMatchedCount(),
                        result.getModifiedCount(),
                        result.getDeletedCount());
        return new Result(errors, counts, verbose(result, indices));
    }

    /** Each index's own result (insert id; matched, modified, upserted id; deleted), at the bulk's indices; empty when not verbose. */
    static Map<Integer, String> verbose(ClientBulkWriteResult result, List<Integer> indices) {
        Map<Integer, String> verbose = new TreeMap<>();
        if (result == null || result.getVerboseResults().isEmpty()) {
            return verbose;
        }
        ClientBulkWriteResult.VerboseResults results =
                result.getVerboseResults().get();
        results.getInsertResults()
                .forEach((index, insert) -> verbose.put(
                        indices.get(index), "insert " + insert.getInsertedId().orElse(null)));
        results.getUpdateResults()
                .forEach((index, update) -> verbose.put(
                        indices.get(index),
                        "update matched=" + update.getMatchedCount() + " modified=" + update.getModifiedCount()
                                + " upserted=" + update.getUpsertedId().orElse(null)));
        results.getDeleteResults()
                .forEach((index, delete) -> verbose.put(indices.get(index), "delete " + delete.getDeletedCount()));
        return verbose;
    }

    private static void reset(MongoClient client) {
        for (String db : List.of("g", "r")) {
            for (String collection : COLLECTIONS) {
                var target = client.getDatabase(db).getCollection(collection);
                target.deleteMany(new Document());
                for (int id = 0; id < 3; id++) {
                    target.insertOne(new Document("_id", id).append("v", id).append("s", "t"));
                }
            }
        }
    }

    private static List<Document> documents(MongoClient client, String db, String collection) {
        return client.getDatabase(db)
                .getCollection(collection)
                .find()
                .sort(new Document("_id", 1))
                .into(new ArrayList<>());
    }

    // ---- the guard's own promises ---------------------------------------------------------------------------

    @Test
    void stalledServer_socketTimeout_oneServerCopy_andTheOtherNamespaceIsNotSent() throws Exception {
        WriteGuard guard = WriteGuard.create(WriteGuardSettings.builder()
                .serverDeadline(Duration.ofMillis(150))
                .build());
        try (EmulatedReplicaSet cluster = EmulatedCluster.replicaSet()
                        .serverVersion(ServerVersion.V8_0)
                        .start();
                GuardFixture fixture = new GuardFixture(cluster.connectionString(), guard.getSettings(), 300, b -> {});
                StallHandle stall = cluster.primary().stall(Stall.uninterruptible("g.a", Duration.ofMillis(1_500)))) {
            GuardedClient guarded = fixture.guard.guardClient(fixture.client);
            List<ClientNamespacedWriteModel> models = List.of(
                    ClientNamespacedWriteModel.insertOne(new MongoNamespace("g.a"), new Document("_id", 1)),
                    ClientNamespacedWriteModel.insertOne(new MongoNamespace("g.b"), new Document("_id", 2)));

            assertThatThrownBy(() -> guarded.bulkWrite(
                            models,
                            ClientBulkWriteOptions.clientBulkWriteOptions().ordered(false)))
                    // the same copy is resent at once and waits behind the stalled one: unknown, never a second copy
                    .isInstanceOfSatisfying(WriteOutcomeUnknownException.class, e -> {
                        assertThat(e.outcome().outcome(0).status()).isEqualTo(WriteStatus.UNKNOWN);
                        assertThat(e.outcome().outcome(0).settleable()).isFalse();
                        assertThat(e.outcome().outcome(0).message()).contains("cannot be settled: a client-level");
                        assertThat(e.outcome().outcome(1).status()).isEqualTo(WriteStatus.SKIPPED);
                    });
            assertThat(fixture.guard.getCopies().heldCount())
                    .as("the client-level outcome keeps no command: nothing held")
                    .isZero();

            assertThat(cluster.truth().awaitIdle(c -> true, Duration.ofSeconds(10)))
                    .isTrue();
            assertThat(cluster.truth().copies(c -> c.commandName().equals("insert")))
                    .hasSize(1);
            assertThat(fixture.client.getDatabase("g").getCollection("a").countDocuments())
                    .isEqualTo(1);
            assertThat(fixture.client.getDatabase("g").getCollection("b").countDocuments())
                    .isZero();
            assertThat(fixture.sent)
                    .allSatisfy(
                            command -> assertThat(command.getNumber("maxTimeMS").longValue())
                                    .isEqualTo(150));
        }
    }

    @Test
    void verboseResults_eachWritesOwnResult_asTheDriversOnTwinData_andInThePartialResult() {
        try (EmulatedReplicaSet cluster = EmulatedCluster.replicaSet()
                        .serverVersion(ServerVersion.V8_0)
                        .start();
                GuardFixture fixture = new GuardFixture(cluster.connectionString(), 5_000)) {
            GuardedClient guarded = fixture.guard.guardClient(fixture.client);
            reset(fixture.client);
            java.util.function.Function<String, List<ClientNamespacedWriteModel>> models = db -> List.of(
                    ClientNamespacedWriteModel.insertOne(new MongoNamespace(db, "a"), new Document("_id", 10)),
                    ClientNamespacedWriteModel.updateOne(
                            new MongoNamespace(db, "a"), Filters.eq("_id", 1), Updates.set("v", 1)),
                    ClientNamespacedWriteModel.updateOne(
                            new MongoNamespace(db, "b"), Filters.eq("_id", 2), Updates.set("v", 9)),
                    ClientNamespacedWriteModel.insertOne(new MongoNamespace(db, "b"), new Document("_id", 0)),
                    ClientNamespacedWriteModel.updateOne(
                            new MongoNamespace(db, "b"),
                            Filters.eq("_id", 7),
                            Updates.set("v", 1),
                            ClientUpdateOneOptions.clientUpdateOneOptions().upsert(true)),
                    ClientNamespacedWriteModel.updateMany(
                            new MongoNamespace(db, "a"), Filters.gte("v", 0), Updates.set("w", 1)),
                    ClientNamespacedWriteModel.deleteOne(new MongoNamespace(db, "a"), Filters.eq("_id", 4)),
                    ClientNamespacedWriteModel.deleteMany(new MongoNamespace(db, "b"), Filters.lte("v", 1)),
                    ClientNamespacedWriteModel.insertOne(new MongoNamespace(db, "a"), new Document("_id", 11)));
            ClientBulkWriteOptions options = ClientBulkWriteOptions.clientBulkWriteOptions()
                    .ordered(false)
                    .verboseResults(true);
            List<Integer> all = List.of(0, 1, 2, 3, 4, 5, 6, 7, 8);
            fixture.sent.clear();

            Result guard = run(() -> guarded.bulkWrite(models.apply("g"), options), all);
            Result driver = run(() -> fixture.client.bulkWrite(models.apply("r"), options), all);

            assertThat(guard).isEqualTo(driver);
            assertThat(guard.errors()).containsOnlyKeys(3);
            assertThat(guard.verbose())
                    .containsOnlyKeys(0, 1, 2, 4, 5, 6, 7, 8)
                    .containsEntry(4, "update matched=1 modified=0 upserted=BsonInt32{value=7}")
                    .containsEntry(6, "delete 0");
            // Inserts grouped as usual; every update and delete in a command of its own.
            assertThat(fixture.sent)
                    .extracting(command -> command.getFirstKey() + ":"
                            + command.getArray(
                                            command.containsKey("insert")
                                                    ? "documents"
                                                    : command.containsKey("update") ? "updates" : "deletes")
                                    .size())
                    .containsExactlyInAnyOrder(
                            "insert:2",
                            "update:1",
                            "update:1",
                            "delete:1",
                            "update:1",
                            "update:1",
                            "insert:1",
                            "delete:1");
            for (String collection : COLLECTIONS) {
                assertThat(documents(fixture.client, "g", collection))
                        .isEqualTo(documents(fixture.client, "r", collection));
            }
        }
    }

    @Test
    void invalidWriteInTheSecondNamespace_nothingIsSent_andTheIndexIsTheCallers() {
        try (EmulatedReplicaSet cluster = EmulatedCluster.replicaSet()
                        .serverVersion(ServerVersion.V8_0)
                        .start();
                GuardFixture fixture = new GuardFixture(cluster.connectionString(), 5_000)) {
            GuardedClient guarded = fixture.guard.guardClient(fixture.client);
            assertThatThrownBy(() -> guarded.bulkWrite(List.of(
                            ClientNamespacedWriteModel.insertOne(new MongoNamespace("g.a"), new Document("_id", 1)),
                            ClientNamespacedWriteModel.insertOne(new MongoNamespace("g.b"), new Document("_id", 1)),
                            ClientNamespacedWriteModel.updateOne(
                                    new MongoNamespace("g.b"), Filters.eq("_id", 1), new Document("v", 2)))))
                    .isInstanceOfSatisfying(
                            io.github.mongowriteguard.exception.InvalidBulkException.class,
                            e -> assertThat(e.index()).isEqualTo(2));
            assertThat(fixture.sent).isEmpty();
        }
    }

    @Test
    void server7_0_theDriverRefuses_theGuardWrites() {
        try (EmulatedReplicaSet cluster = EmulatedCluster.replicaSet()
                        .serverVersion(ServerVersion.V7_0)
                        .start();
                GuardFixture fixture = new GuardFixture(cluster.connectionString(), 5_000)) {
            List<ClientNamespacedWriteModel> models = List.of(
                    ClientNamespacedWriteModel.insertOne(new MongoNamespace("g.a"), new Document("_id", 1)),
                    ClientNamespacedWriteModel.insertOne(new MongoNamespace("g.b"), new Document("_id", 1)));
            assertThatThrownBy(() -> fixture.client.bulkWrite(models)).isInstanceOf(RuntimeException.class);

            ClientBulkWriteResult result =
                    fixture.guard.guardClient(fixture.client).bulkWrite(models);

            assertThat(result.getInsertedCount()).isEqualTo(2);
        }
    }

    @Test
    void callersSession_outsideATransaction_staysUsableForTheDriver() {
        try (EmulatedReplicaSet cluster = EmulatedCluster.replicaSet()
                        .serverVersion(ServerVersion.V8_0)
                        .start();
                GuardFixture fixture = new GuardFixture(cluster.connectionString(), 5_000);
                ClientSession session = fixture.client.startSession()) {
            GuardedClient guarded = fixture.guard.guardClient(fixture.client);
            ClientBulkWriteResult result = guarded.bulkWrite(
                    session,
                    List.of(
                            ClientNamespacedWriteModel.insertOne(new MongoNamespace("g.a"), new Document("_id", 1)),
                            ClientNamespacedWriteModel.updateOne(
                                    new MongoNamespace("g.b"),
                                    Filters.eq("_id", 7),
                                    Updates.set("v", 1),
                                    ClientUpdateOneOptions.clientUpdateOneOptions()
                                            .upsert(true))));
            assertThat(result.getInsertedCount()).isEqualTo(1);
            assertThat(result.getUpsertedCount()).isEqualTo(1);
            assertThat(fixture.sent)
                    .allSatisfy(command -> assertThat(command.getDocument("lsid"))
                            .isEqualTo(session.getServerSession().getIdentifier()));

            fixture.client.getDatabase("g").getCollection("a").insertOne(session, new Document("_id", 2));
            fixture.client.bulkWrite(
                    session,
                    List.of(ClientNamespacedWriteModel.insertOne(new MongoNamespace("g.b"), new Document("_id", 3))));

            assertThat(fixture.client.getDatabase("g").getCollection("a").countDocuments())
                    .isEqualTo(2);
            assertThat(fixture.client.getDatabase("g").getCollection("b").countDocuments())
                    .isEqualTo(2);
        }
    }

    /**
     * In a transaction the guard makes the driver's own call; server 8.0 answers a failed op there with an error item
     * of an {@code ok: 1} reply and aborts the transaction ({@code bulk_write.cpp}, {@code write_ops_exec.cpp}
     * {@code handleError}), so both raise {@code ClientBulkWriteException} with the same write error, and nothing is
     * committed.
     */
    @Test
    void writeErrorInATransaction_theGuardRaisesWhatTheDriverRaises() {
        try (EmulatedReplicaSet cluster = EmulatedCluster.replicaSet()
                        .serverVersion(ServerVersion.V8_0)
                        .start();
                GuardFixture fixture = new GuardFixture(cluster.connectionString(), 5_000)) {
            GuardedClient guarded = fixture.guard.guardClient(fixture.client);
            Map<String, ClientBulkWriteException> raised = new LinkedHashMap<>();
            for (String db : List.of("driver", "guard")) {
                fixture.client.getDatabase(db).createCollection("a");
                MongoNamespace a = new MongoNamespace(db + ".a");
                List<ClientNamespacedWriteModel> models = List.of(
                        ClientNamespacedWriteModel.insertOne(a, new Document("_id", 1)),
                        ClientNamespacedWriteModel.insertOne(a, new Document("_id", 1)),
                        ClientNamespacedWriteModel.insertOne(a, new Document("_id", 2)));
                ClientBulkWriteOptions unordered =
                        ClientBulkWriteOptions.clientBulkWriteOptions().ordered(false);
                try (ClientSession session = fixture.client.startSession()) {
                    session.startTransaction();
                    try {
                        if (db.equals("driver")) {
                            fixture.client.bulkWrite(session, models, unordered);
                        } else {
                            guarded.bulkWrite(session, models, unordered);
                        }
                    } catch (ClientBulkWriteException e) {
                        raised.put(db, e);
                    }
                    assertThatThrownBy(session::commitTransaction)
                            .isInstanceOf(com.mongodb.MongoCommandException.class);
                }
                assertThat(fixture.client.getDatabase(db).getCollection("a").countDocuments())
                        .isZero();
            }
            assertThat(raised).containsOnlyKeys("driver", "guard");
            for (ClientBulkWriteException e : raised.values()) {
                assertThat(e.getWriteErrors()).containsOnlyKeys(1);
                assertThat(e.getWriteErrors().get(1).getCode()).isEqualTo(11000);
                assertThat(e.getPartialResult().orElseThrow().getInsertedCount())
                        .isEqualTo(1);
            }
        }
    }

    @Test
    void execute_everyIndexHasItsOutcome_atTheCallersIndex() {
        try (EmulatedReplicaSet cluster = EmulatedCluster.replicaSet()
                        .serverVersion(ServerVersion.V8_0)
                        .start();
                GuardFixture fixture = new GuardFixture(cluster.connectionString(), 5_000)) {
            WriteOutcome<BsonDocument> outcome = fixture.guard
                    .guardClient(fixture.client)
                    .execute(
                            List.of(
                                    ClientNamespacedWriteModel.insertOne(
                                            new MongoNamespace("g.a"), new Document("_id", 1)),
                                    ClientNamespacedWriteModel.insertOne(
                                            new MongoNamespace("g.b"), new Document("_id", 1)),
                                    ClientNamespacedWriteModel.insertOne(
                                            new MongoNamespace("g.a"), new Document("_id", 1)),
                                    ClientNamespacedWriteModel.updateOne(
                                            new MongoNamespace("g.a"), Filters.eq("_id", 1), Updates.set("v", 1))),
                            ClientBulkWriteOptions.clientBulkWriteOptions());
            assertThat(outcome.outcomes())
                    .extracting(o -> o.status())
                    .containsExactly(WriteStatus.APPLIED, WriteStatus.APPLIED, WriteStatus.FAILED, WriteStatus.SKIPPED);
            assertThat(outcome.outcome(2).errorCode()).isEqualTo(11000);
            assertThat(outcome.outcome(3).relatedIndex()).isEqualTo(2);
            assertThat(Objects.requireNonNull(outcome.inserts()).get(1).getIndex())
                    .isEqualTo(1);
        }
    }
}
