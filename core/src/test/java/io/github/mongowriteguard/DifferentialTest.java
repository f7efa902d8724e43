package io.github.mongowriteguard;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.fail;

import com.mongodb.ConnectionString;
import com.mongodb.MongoBulkWriteException;
import com.mongodb.MongoClientSettings;
import com.mongodb.MongoException;
import com.mongodb.bulk.BulkWriteError;
import com.mongodb.bulk.BulkWriteResult;
import com.mongodb.bulk.BulkWriteUpsert;
import com.mongodb.client.MongoClient;
import com.mongodb.client.MongoClients;
import com.mongodb.client.MongoCollection;
import com.mongodb.client.model.BulkWriteOptions;
import com.mongodb.client.model.InsertOneModel;
import com.mongodb.client.model.WriteModel;
import com.mongodb.event.CommandListener;
import com.mongodb.event.CommandStartedEvent;
import io.github.mongowriteguard.DifferentialBulk.Mode;
import io.github.mongowriteguard.DifferentialBulk.Op;
import io.github.mongowriteguard.exception.GuardedBulkWriteException;
import io.github.mongowriteguard.outcome.IndexOutcome;
import io.github.mongowriteguard.outcome.WriteOutcome;
import io.github.mongowriteguard.outcome.WriteStatus;
import io.github.mongowriteguard.testkit.EmulatedCluster;
import io.github.mongowriteguard.testkit.EmulatedShardedCluster;
import io.github.mongowriteguard.testkit.TestDeployment;
import io.github.mongowriteguard.testkit.sharding.ShardKey;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Random;
import java.util.Set;
import java.util.TreeMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;
import org.bson.BsonDocument;
import org.bson.BsonObjectId;
import org.bson.BsonString;
import org.bson.BsonValue;
import org.bson.Document;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInfo;

/**
 * Differential test of CONTRACT.md: random bulks ({@link DifferentialBulk}) run through the guard and, on a twin
 * collection with the same initial documents, through the raw driver as each mode's oracle says; then compared
 * document by document and result by result. On an emulated replica set and on a 3-shard cluster hashed on
 * {@code _id}.
 *
 * <p>The oracles, computed here from the contract and never from the planner:
 * <ul>
 *   <li>UNORDERED: the rounds ({@link ContractRounds}: round k = the k-th run of every key, a run being the key's
 *       consecutive writes of one request type; unkeyed writes in round 1), each run as the driver's
 *       {@code bulkWrite(roundModels, ordered(false))}; the results summed, indices mapped back.</li>
 *   <li>ORDERED_KEYED: each key's writes in the caller's order as one driver ORDERED bulk (stopping at that key's
 *       first error; later writes on the key SKIPPED). When a command-level error can stop the call (a fail point),
 *       the per-key bulks cannot say what the guard's stop leaves
 *       unsent, so the oracle runs the rounds ({@link ContractRounds}) themselves with the driver: each round's
 *       single writes of the keys still alive as one unordered bulk, its key runs as ordered bulks sent again after
 *       a failure without the failed key, a key dying at its first error, the whole call stopping at a command
 *       error.
 *       Where both apply they agree (keys are independent: checked when the oracles were validated).</li>
 *   <li>ORDERED_UNKEYED and STRICT_ORDERED: the driver's ORDERED {@code bulkWrite}.</li>
 * </ul>
 * Compared: the final documents as canonical extended JSON (BSON types and field order included, so int 5 and long 5
 * differ; an {@code _id} the server generated for an upsert is compared by the rest of its document); per-index
 * status (APPLIED, FAILED with its code, SKIPPED); inserted/matched/modified/deleted counts, upserts with index and
 * id, inserts applied with index and id; for {@code bulkWrite}, the write errors (index, code) of its
 * {@link GuardedBulkWriteException}; every statement the guard sent against the driver's own encoding of that write
 * ({@link #encode}: same fields, order, values and types) and the caller's comment, bypassDocumentValidation and let
 * on every command. After a command-level error: the documents, the statuses the oracle still knows, and
 * {@code bulkWrite} throwing the driver's exception type with the same code.
 *
 * <p>The oracle's driver runs use the caller's bulk options (comment, bypassDocumentValidation). Inserts without
 * {@code _id} get theirs from the guard; the oracle reuses them. A fail point ({@code failCommand}, command errors
 * only: like mongod's, it cannot inject write errors, which come from the server's own checks) is set freshly before
 * each side's run and turned off after it; its codes (2, 121) are retried neither by the driver nor by the guard.
 *
 * <p>Replay one bulk with the line printed on failure, e.g. {@code -Dtest='DifferentialTest#unordered_equalsEachRoundAsADriverUnorderedBulk_onAReplicaSet'
 * -Ddiff.seed=<seed> -Ddiff.bulks=1}. {@code -Ddiff.bulks=N} runs N bulks per mode and deployment;
 * {@code -Ddiff.dump=<file>} appends every differing bulk with its trace to that file.
 */
class DifferentialTest {
    static final int REPLICA_SET_BULKS = 1_000;
    static final int SHARDED_BULKS = 400;
    private static final long BASE_SEED = 20_250_601_000L;
    static final int HOT_REPLICA_SET_BULKS = 300;
    static final int HOT_SHARDED_BULKS = 150;
    private static final long HOT_BASE_SEED = 20_261_201_000L;
    private static final ShardKey HASHED_ID = ShardKey.of(new BsonDocument("_id", new BsonString("hashed")));
    private static final Set<String> WRITE_COMMANDS = Set.of("insert", "update", "delete");

    private static Env replicaSet;
    private static Env sharded;

    @AfterAll
    static void closeDeployments() {
        if (replicaSet != null) {
            replicaSet.close();
        }
        if (sharded != null) {
            sharded.close();
        }
    }

    @Test
    void unordered_equalsEachRoundAsADriverUnorderedBulk_onAReplicaSet(TestInfo test) {
        check(replicaSet(), Mode.UNORDERED, test);
    }

    @Test
    void unordered_equalsEachRoundAsADriverUnorderedBulk_onAShardedCluster(TestInfo test) {
        check(sharded(), Mode.UNORDERED, test);
    }

    @Test
    void orderedAllKeyed_equalsEachKeyAsADriverOrderedBulk_onAReplicaSet(TestInfo test) {
        check(replicaSet(), Mode.ORDERED_KEYED, test);
    }

    @Test
    void orderedAllKeyed_equalsEachKeyAsADriverOrderedBulk_onAShardedCluster(TestInfo test) {
        check(sharded(), Mode.ORDERED_KEYED, test);
    }

    @Test
    void orderedWithUnkeyedWrites_equalsTheDriversOrderedBulk_onAReplicaSet(TestInfo test) {
        check(replicaSet(), Mode.ORDERED_UNKEYED, test);
    }

    @Test
    void orderedWithUnkeyedWrites_equalsTheDriversOrderedBulk_onAShardedCluster(TestInfo test) {
        check(sharded(), Mode.ORDERED_UNKEYED, test);
    }

    @Test
    void strictOrdered_equalsTheDriversOrderedBulk_onAReplicaSet(TestInfo test) {
        check(replicaSet(), Mode.STRICT_ORDERED, test);
    }

    @Test
    void strictOrdered_equalsTheDriversOrderedBulk_onAShardedCluster(TestInfo test) {
        check(sharded(), Mode.STRICT_ORDERED, test);
    }

    @Test
    void unorderedHotKeys_equalEachRoundAsADriverUnorderedBulk_onAReplicaSet(TestInfo test) {
        checkHotKeys(replicaSet(), Mode.UNORDERED, test);
    }

    @Test
    void unorderedHotKeys_equalEachRoundAsADriverUnorderedBulk_onAShardedCluster(TestInfo test) {
        checkHotKeys(sharded(), Mode.UNORDERED, test);
    }

    @Test
    void orderedHotKeys_equalEachKeyAsADriverOrderedBulk_onAReplicaSet(TestInfo test) {
        checkHotKeys(replicaSet(), Mode.ORDERED_KEYED, test);
    }

    @Test
    void orderedHotKeys_equalEachKeyAsADriverOrderedBulk_onAShardedCluster(TestInfo test) {
        checkHotKeys(sharded(), Mode.ORDERED_KEYED, test);
    }

    /** Hot-key bulks ({@link DifferentialBulk#generateHotKeys}): long runs on few keys, failures inside runs. */
    private static void checkHotKeys(Env env, Mode mode, TestInfo test) {
        int bulks = Integer.getInteger("diff.bulks", env.sharded ? HOT_SHARDED_BULKS : HOT_REPLICA_SET_BULKS);
        long base =
                Long.getLong("diff.seed", HOT_BASE_SEED + (env.sharded ? 1_000_000L : 0) + mode.ordinal() * 100_000L);
        String replay =
                "-Dtest='DifferentialTest#" + test.getTestMethod().orElseThrow().getName() + "'";
        Stats stats = run(env, mode, base, bulks, GUARD, replay, seed -> DifferentialBulk.generateHotKeys(seed, mode));
        System.out.println(stats.summary());
        if (stats.differences > 0) {
            fail(stats.report());
        }
        assertThat(stats.bulks).isEqualTo(bulks);
        if (bulks >= 100) {
            assertThat(stats.withWriteErrors).as("bulks with write errors").isPositive();
            assertThat(stats.failPointsFired).as("fail points that fired").isPositive();
        }
    }

    private static void check(Env env, Mode mode, TestInfo test) {
        int defaultBulks = env.sharded ? SHARDED_BULKS : REPLICA_SET_BULKS;
        int bulks = Integer.getInteger("diff.bulks", defaultBulks);
        long base = Long.getLong("diff.seed", BASE_SEED + (env.sharded ? 1_000_000L : 0) + mode.ordinal() * 100_000L);
        String replay =
                "-Dtest='DifferentialTest#" + test.getTestMethod().orElseThrow().getName() + "'";
        Stats stats = run(env, mode, base, bulks, GUARD, replay);
        System.out.println(stats.summary());
        if (stats.differences > 0) {
            fail(stats.report());
        }
        assertThat(stats.bulks).isEqualTo(bulks);
        if (bulks >= 100) { // the generator still reaches what it is meant to reach
            assertThat(stats.withWriteErrors).as("bulks with write errors").isPositive();
            assertThat(stats.failPointsFired).as("fail points that fired").isPositive();
        }
    }

    private static synchronized Env replicaSet() {
        if (replicaSet == null) {
            TestDeployment deployment = TestDeployment.replicaSet();
            replicaSet = new Env("replica set", false, deployment.connectionString(), deployment, namespace -> {});
        }
        return replicaSet;
    }

    private static synchronized Env sharded() {
        if (sharded == null) {
            EmulatedShardedCluster cluster = EmulatedCluster.sharded().shards(3).start();
            sharded = new Env(
                    "sharded (3 shards, hashed _id)",
                    true,
                    cluster.connectionString(),
                    cluster,
                    namespace -> cluster.shardCollection(namespace, HASHED_ID));
        }
        return sharded;
    }

    /** A deployment with a raw driver client (setup, oracle, reads, fail points), a default and a strict guard. */
    static final class Env implements AutoCloseable {
        final String name;
        final boolean sharded;
        final String connectionString;
        final AutoCloseable deployment;
        final Consumer<String> prepare;
        final MongoClient raw;
        final List<BsonDocument> rawSent = new CopyOnWriteArrayList<>();
        final GuardFixture guard;
        final GuardFixture strict;
        /** What each guard sent, cut to what the server may have run. */
        final RanCommands guardRan = new RanCommands();

        final RanCommands strictRan = new RanCommands();
        private int collections;
        private int encodings;

        Env(String name, boolean sharded, String connectionString, AutoCloseable deployment, Consumer<String> prepare) {
            this.name = name;
            this.sharded = sharded;
            this.connectionString = connectionString;
            this.deployment = deployment;
            this.prepare = prepare;
            this.raw = MongoClients.create(MongoClientSettings.builder()
                    .applyConnectionString(new ConnectionString(connectionString))
                    .applyToClusterSettings(c -> c.serverSelectionTimeout(10, TimeUnit.SECONDS))
                    .applyToSocketSettings(s -> s.readTimeout(5_000, TimeUnit.MILLISECONDS))
                    .addCommandListener(new CommandListener() {
                        @Override
                        public void commandStarted(CommandStartedEvent event) {
                            if (WRITE_COMMANDS.contains(event.getCommandName())) {
                                rawSent.add(event.getCommand().clone());
                            }
                        }
                    })
                    .build());
            this.guard = new GuardFixture(
                    connectionString, WriteGuardSettings.defaults(), 5_000, b -> b.addCommandListener(guardRan));
            this.strict = new GuardFixture(
                    connectionString,
                    WriteGuardSettings.builder().strictOrdered(true).build(),
                    5_000,
                    b -> b.addCommandListener(strictRan));
        }

        /** A fresh collection (sharded when the deployment is) holding the bulk's initial documents, in their order. */
        String collection(DifferentialBulk bulk, String role) {
            String name = role + (collections++);
            prepare.accept(database(bulk) + "." + name);
            if (!bulk.initial.isEmpty()) {
                List<Document> documents = new ArrayList<>();
                bulk.initial.forEach(d -> documents.add(DifferentialBulk.document(d)));
                raw.getDatabase(database(bulk)).getCollection(name).insertMany(documents);
            }
            return name;
        }

        MongoCollection<Document> rawCollection(DifferentialBulk bulk, String name) {
            return raw.getDatabase(database(bulk)).getCollection(name);
        }

        static String database(DifferentialBulk bulk) {
            return "diff_" + bulk.mode.name().toLowerCase(java.util.Locale.ROOT);
        }

        void failPoint(DifferentialBulk.FailPoint failPoint) {
            if (failPoint != null) {
                raw.getDatabase("admin").runCommand(failPoint.configure());
            }
        }

        void failPointOff(DifferentialBulk.FailPoint failPoint) {
            if (failPoint != null) {
                raw.getDatabase("admin")
                        .runCommand(new Document("configureFailPoint", "failCommand").append("mode", "off"));
            }
        }

        @Override
        public void close() {
            raw.close();
            guard.close();
            strict.close();
            try {
                deployment.close();
            } catch (Exception e) {
                throw new IllegalStateException(e);
            }
        }
    }

    enum Api {
        EXECUTE,
        BULK_WRITE
    }

    /** The side under test: runs the caller's models on the named collection and reports what it saw. */
    interface Subject {
        Result run(Env env, DifferentialBulk bulk, String collection, List<WriteModel<Document>> models, Api api);
    }

    /** The guard: {@code execute} or the driver-style {@code bulkWrite}, with the default or the strict settings. */
    static final Subject GUARD = (env, bulk, collection, models, api) -> {
        boolean strict = bulk.mode == Mode.STRICT_ORDERED;
        return guard(
                strict ? env.strict : env.guard, strict ? env.strictRan : env.guardRan, bulk, collection, models, api);
    };

    /** The guard of {@code fixture} (whose client reports its write commands to {@code ran}) as the side under test. */
    static Subject guardOf(GuardFixture fixture, RanCommands ran) {
        return (env, bulk, collection, models, api) -> guard(fixture, ran, bulk, collection, models, api);
    }

    private static Result guard(
            GuardFixture fixture,
            RanCommands ran,
            DifferentialBulk bulk,
            String collection,
            List<WriteModel<Document>> models,
            Api api) {
        GuardedCollection<Document> guarded =
                fixture.wrap(fixture.client.getDatabase(Env.database(bulk)).getCollection(collection));
        return observe(
                ran,
                bulk,
                api,
                () -> guarded.execute(models, bulk.options()),
                () -> guarded.bulkWrite(models, bulk.options()));
    }

    /**
     * What a guard's {@code execute} or driver-style {@code bulkWrite} did, as {@link Result}: the synchronous guard's
     * and the reactive guard's (awaited) alike.
     */
    static Result observe(
            RanCommands ran,
            DifferentialBulk bulk,
            Api api,
            java.util.function.Supplier<WriteOutcome<?>> execute,
            java.util.function.Supplier<BulkWriteResult> bulkWrite) {
        Result observed = new Result(bulk.ops.size());
        ran.clear();
        try {
            if (api == Api.EXECUTE) {
                observed.record(execute.get());
            } else {
                BulkWriteResult result = bulkWrite.get();
                java.util.Arrays.fill(observed.status, WriteStatus.APPLIED.name());
                observed.record(result, null);
            }
        } catch (GuardedBulkWriteException e) {
            observed.record(e.outcome());
            observed.resetCounts();
            observed.record(e.getWriteResult(), null);
            observed.writeErrors = errors(e.getWriteErrors());
            observed.bulkCause = e.getCause() instanceof MongoException cause ? cause : null;
        } catch (RuntimeException e) {
            observed.thrown = e;
        }
        observed.commands.addAll(ran.commands());
        return observed;
    }

    /** What one side did: per-index status, counts, what it threw, the write commands it sent. */
    static final class Result {
        /** "APPLIED", "FAILED code", "SKIPPED" (or the guard's other statuses); null where the oracle cannot tell. */
        final String[] status;

        long inserted;
        long matched;
        long modified;
        long deleted;
        final Map<Integer, BsonValue> upserts = new TreeMap<>();
        final Map<Integer, BsonValue> inserts = new TreeMap<>();
        /** The oracle: the command-level error that stopped the driver. */
        MongoException commandError;
        /** The guard: what left the call other than a GuardedBulkWriteException. */
        RuntimeException thrown;
        /** The guard's bulkWrite: the write errors of its GuardedBulkWriteException, as "index:code". */
        List<String> writeErrors;
        /** The guard's bulkWrite: the driver's exception its GuardedBulkWriteException carries as its cause, or null. */
        MongoException bulkCause;

        final List<BsonDocument> commands = new ArrayList<>();
        /** The collection the side wrote to (the ORDERED_KEYED oracle may move to a fresh one). */
        String collection;

        String oracle;

        Result(int size) {
            this.status = new String[size];
        }

        void record(WriteOutcome<?> outcome) {
            for (IndexOutcome o : outcome.outcomes()) {
                status[o.index()] = o.status() == WriteStatus.FAILED
                        ? "FAILED " + o.errorCode()
                        : o.status().name();
            }
            inserted = outcome.insertedCount();
            matched = outcome.matchedCount();
            modified = outcome.modifiedCount();
            deleted = outcome.deletedCount();
            upserts.clear();
            inserts.clear();
            outcome.upserts().forEach(u -> upserts.put(u.getIndex(), u.getId()));
            outcome.inserts().forEach(i -> inserts.put(i.getIndex(), i.getId()));
        }

        void resetCounts() {
            inserted = 0;
            matched = 0;
            modified = 0;
            deleted = 0;
            upserts.clear();
            inserts.clear();
        }

        /** Adds one driver result; {@code indices} maps its positions to the caller's (null: the same). */
        void record(BulkWriteResult result, List<Integer> indices) {
            inserted += result.getInsertedCount();
            matched += result.getMatchedCount();
            modified += result.getModifiedCount();
            deleted += result.getDeletedCount();
            for (BulkWriteUpsert upsert : result.getUpserts()) {
                upserts.put(indices == null ? upsert.getIndex() : indices.get(upsert.getIndex()), upsert.getId());
            }
            if (indices == null) {
                result.getInserts().forEach(insert -> inserts.put(insert.getIndex(), insert.getId()));
            }
        }

        /** Whether some write of the call is APPLIED or UNKNOWN. */
        boolean mayHaveApplied() {
            for (String s : status) {
                if (s != null
                        && (s.startsWith(WriteStatus.APPLIED.name()) || s.startsWith(WriteStatus.UNKNOWN.name()))) {
                    return true;
                }
            }
            return false;
        }

        boolean anyFailed() {
            for (String s : status) {
                if (s == null || !s.equals(WriteStatus.APPLIED.name())) {
                    return true;
                }
            }
            return false;
        }

        String counts(Set<String> knownIds) {
            return "inserted=" + inserted + " matched=" + matched + " modified=" + modified + " deleted=" + deleted
                    + " upserts=" + ids(upserts, knownIds) + " inserts=" + ids(inserts, knownIds);
        }

        private static String ids(Map<Integer, BsonValue> ids, Set<String> knownIds) {
            StringBuilder text = new StringBuilder("[");
            ids.forEach((index, id) -> text.append(text.length() > 1 ? ", " : "")
                    .append(index)
                    .append(':')
                    .append(canonicalId(id, knownIds)));
            return text.append(']').toString();
        }
    }

    /** Runs bulks through the raw driver on one collection and collects the expectation. */
    static final class Oracle {
        final MongoCollection<Document> collection;
        final DifferentialBulk bulk;
        final List<WriteModel<Document>> models;
        final Result result;

        Oracle(Env env, DifferentialBulk bulk, String collection, String oracle) {
            this(env, bulk, collection, oracle, bulk.models(true));
        }

        /** With the caller's own {@code models}: a driver run as the side under test, to validate these oracles. */
        Oracle(Env env, DifferentialBulk bulk, String collection, String oracle, List<WriteModel<Document>> models) {
            this.collection = env.rawCollection(bulk, collection);
            this.bulk = bulk;
            this.models = models;
            this.result = new Result(bulk.ops.size());
            this.result.collection = collection;
            this.result.oracle = oracle;
            this.shardOf = env.deployment instanceof EmulatedShardedCluster cluster
                    ? id -> cluster.chunkMap(Env.database(bulk) + "." + collection)
                            .shardOfDocument(new BsonDocument("_id", id))
                    : null;
        }

        /** The emulator's shard of an _id in the oracle's collection; null on a replica set. */
        final java.util.function.Function<BsonValue, String> shardOf;

        /** The caller's writes at {@code indices} as one driver bulk; false after a command-level error (the call stops). */
        boolean bulk(List<Integer> indices, boolean ordered) {
            if (indices.isEmpty()) {
                return true;
            }
            List<WriteModel<Document>> part = new ArrayList<>(indices.size());
            indices.forEach(i -> part.add(models.get(i)));
            BulkWriteOptions options = bulk.options().ordered(ordered);
            BulkWriteResult written;
            List<BulkWriteError> errors = List.of();
            try {
                written = collection.bulkWrite(part, options);
            } catch (MongoBulkWriteException e) {
                written = e.getWriteResult();
                errors = e.getWriteErrors();
                if (e.getWriteConcernError() != null) {
                    throw new IllegalStateException(
                            "oracle: unexpected write concern error " + e.getWriteConcernError(), e);
                }
            } catch (IllegalArgumentException e) {
                throw new IllegalStateException("oracle: the driver refused the bulk (a generator bug)", e);
            } catch (MongoException e) {
                result.commandError = e;
                return false;
            }
            Map<Integer, Integer> codes = new HashMap<>();
            errors.forEach(error -> codes.put(error.getIndex(), error.getCode()));
            int stop = ordered && !errors.isEmpty() ? errors.get(0).getIndex() : Integer.MAX_VALUE;
            for (int position = 0; position < indices.size(); position++) {
                int index = indices.get(position);
                result.status[index] = codes.containsKey(position)
                        ? "FAILED " + codes.get(position)
                        : position > stop ? WriteStatus.SKIPPED.name() : WriteStatus.APPLIED.name();
            }
            result.record(written, indices);
            // The inserts applied, from the statuses: the driver's own list is not usable here. Its
            // BulkWriteBatch.getInsertedItems (r5.6.5) keeps the ids of an insert batch whose caller index is not
            // among the batch's write-error positions: it mixes caller indices with positions in the batch (an
            // applied insert can be dropped, a failed one kept) and keeps the inserts an ORDERED batch never reached.
            for (int index : indices) {
                if (models.get(index) instanceof InsertOneModel<Document> insert
                        && WriteStatus.APPLIED.name().equals(result.status[index])) {
                    result.inserts.put(
                            index,
                            new Document("_id", insert.getDocument().get("_id"))
                                    .toBsonDocument()
                                    .get("_id"));
                }
            }
            return true;
        }

        Result rounds() {
            for (ContractRounds.Parts round : ContractRounds.of(bulk)) {
                if (!bulk(round.together(), false)) {
                    break;
                }
            }
            return result;
        }

        Result perKey() {
            for (List<Integer> writes : bulk.writesByKey().values()) {
                if (!bulk(writes, true)) {
                    break;
                }
            }
            return result;
        }

        /**
         * ORDERED_KEYED when a command error may stop the call: the rounds ({@link ContractRounds}), a key dying at its
         * first failure. Each round's single writes of the keys still alive as one unordered bulk; then its key runs as
         * one ordered bulk, which stops at the first failure: the rest is sent again as an ordered bulk without the
         * failed key's writes.
         */
        Result roundsPerKey() {
            java.util.Set<String> dead = new java.util.HashSet<>();
            for (ContractRounds.Parts round : ContractRounds.of(bulk, shardOf)) {
                List<Integer> together = alive(round.together(), dead);
                if (!bulk(together, false)) {
                    return result;
                }
                for (int index : together) {
                    if (!WriteStatus.APPLIED.name().equals(result.status[index])) {
                        dead.add(bulk.ops.get(index).key());
                    }
                }
                List<Integer> pending = alive(round.keyRuns(), dead);
                while (!pending.isEmpty()) {
                    if (!bulk(pending, true)) {
                        return result;
                    }
                    int failed = -1;
                    for (int position = 0; position < pending.size() && failed < 0; position++) {
                        if (!WriteStatus.APPLIED.name().equals(result.status[pending.get(position)])) {
                            failed = position;
                        }
                    }
                    if (failed < 0) {
                        break;
                    }
                    dead.add(bulk.ops.get(pending.get(failed)).key());
                    pending = alive(pending.subList(failed + 1, pending.size()), dead);
                    // Not run by the stopped bulk, sent again: what the oracle knows of them comes from the next bulk.
                    pending.forEach(index -> result.status[index] = null);
                }
            }
            return result;
        }

        /** The writes whose key is alive; the others SKIPPED. */
        private List<Integer> alive(List<Integer> writes, java.util.Set<String> dead) {
            List<Integer> alive = new ArrayList<>();
            for (int index : writes) {
                if (dead.contains(bulk.ops.get(index).key())) {
                    result.status[index] = WriteStatus.SKIPPED.name();
                } else {
                    alive.add(index);
                }
            }
            return alive;
        }

        Result ordered() {
            bulk(java.util.stream.IntStream.range(0, bulk.ops.size()).boxed().toList(), true);
            return result;
        }
    }

    /** The expectation of CONTRACT.md for the bulk's mode, from the raw driver on a twin collection. */
    static Result oracle(Env env, DifferentialBulk bulk, Stats stats) {
        String collection = env.collection(bulk, "o");
        env.failPoint(bulk.failPoint);
        Result expected;
        try {
            switch (bulk.mode) {
                case UNORDERED:
                    expected = new Oracle(env, bulk, collection, "rounds as driver unordered bulks").rounds();
                    break;
                case ORDERED_KEYED:
                    if (bulk.failPoint == null) {
                        expected = new Oracle(env, bulk, collection, "each key as one driver ordered bulk").perKey();
                        if (expected.commandError == null) {
                            break;
                        }
                        stats.unexpectedCommandErrors++;
                        env.rawCollection(bulk, collection).drop();
                        collection = env.collection(bulk, "o");
                    }
                    expected = new Oracle(env, bulk, collection, "rounds, a key dying at its first failure")
                            .roundsPerKey();
                    break;
                default:
                    expected = new Oracle(env, bulk, collection, "the driver's ordered bulk").ordered();
                    break;
            }
        } finally {
            env.failPointOff(bulk.failPoint);
        }
        return expected;
    }

    /** Per mode and deployment: what ran and what differed. */
    static final class Stats {
        final String deployment;
        final Mode mode;
        int bulks;
        int differences;
        int withWriteErrors;
        int withCommandErrors;
        int failPoints;
        int failPointsFired;
        int pipelines;
        int repeatedKeys;
        /** updateMany/deleteMany writes whose filter pins _id (sent as single-document statements), and upserts among them. */
        int pinnedMulti;

        int pinnedMultiUpserts;
        int bulkWriteApi;
        int unexpectedCommandErrors;
        final Map<String, Integer> classes = new TreeMap<>();
        final Map<String, String> classSeeds = new TreeMap<>();
        final Map<Integer, Integer> codes = new TreeMap<>();
        final List<String> reports = new ArrayList<>();
        final List<String> seeds = new ArrayList<>();

        Stats(String deployment, Mode mode) {
            this.deployment = deployment;
            this.mode = mode;
        }

        String summary() {
            return "DifferentialTest " + deployment + ", " + mode + ": " + bulks + " bulks, differences " + differences
                    + (classes.isEmpty() ? "" : " " + classes) + "; write errors in " + withWriteErrors + " (codes "
                    + codes + ")"
                    + ", command errors in " + withCommandErrors + " (fail points set " + failPoints + ", fired "
                    + failPointsFired
                    + "; bulks with an update pipeline " + pipelines + ")"
                    + (unexpectedCommandErrors == 0 ? "" : ", unexpected command errors " + unexpectedCommandErrors)
                    + "; repeated keys in " + repeatedKeys + "; updateMany/deleteMany pinning _id " + pinnedMulti
                    + " (upserts " + pinnedMultiUpserts + "); guard API execute " + (bulks - bulkWriteApi)
                    + " / bulkWrite " + bulkWriteApi;
        }

        String report() {
            StringBuilder text = new StringBuilder(summary()).append("\nFirst differing bulks:\n");
            reports.forEach(r -> text.append(r).append("\n\n"));
            text.append("One replay seed per class of difference:");
            classSeeds.forEach(
                    (c, seed) -> text.append("\n  ").append(c).append(": ").append(seed));
            text.append("\nDiffering seeds (up to 40): ").append(seeds);
            return text.toString();
        }
    }

    /** Runs {@code bulks} seeded bulks of one mode through {@code subject} and its oracle. */
    static Stats run(Env env, Mode mode, long base, int bulks, Subject subject, String replay) {
        return run(env, mode, base, bulks, subject, replay, seed -> DifferentialBulk.generate(seed, mode, env.sharded));
    }

    /** As above, with bulks drawn by {@code generator} from their seeds. */
    static Stats run(
            Env env,
            Mode mode,
            long base,
            int bulks,
            Subject subject,
            String replay,
            java.util.function.LongFunction<DifferentialBulk> generator) {
        Stats stats = new Stats(env.name, mode);
        for (int i = 0; i < bulks; i++) {
            DifferentialBulk bulk = generator.apply(base + i);
            List<String> differences = new ArrayList<>();
            StringBuilder trace = new StringBuilder();
            try {
                runOne(env, bulk, subject, stats, differences, trace);
            } catch (RuntimeException | AssertionError e) {
                throw new AssertionError(
                        "bulk failed in the test itself; replay with " + replayLine(replay, bulk.seed) + "\n" + bulk
                                + trace,
                        e);
            }
            stats.bulks++;
            if (!differences.isEmpty() && System.getProperty("diff.dump") != null) {
                try {
                    java.nio.file.Files.writeString(
                            java.nio.file.Path.of(System.getProperty("diff.dump")),
                            "=== " + mode + " " + env.name + " " + bulk + trace + "\n  DIFFERENCES:\n    "
                                    + String.join("\n    ", differences) + "\n",
                            java.nio.file.StandardOpenOption.CREATE,
                            java.nio.file.StandardOpenOption.APPEND);
                } catch (java.io.IOException e) {
                    throw new java.io.UncheckedIOException(e);
                }
            }
            if (!differences.isEmpty()) {
                stats.differences++;
                Set<String> classes = new java.util.TreeSet<>();
                differences.forEach(d -> classes.add(d.substring(0, d.indexOf(": "))));
                classes.forEach(c -> {
                    stats.classes.merge(c, 1, Integer::sum);
                    stats.classSeeds.putIfAbsent(c, replayLine(replay, bulk.seed));
                });
                if (stats.seeds.size() < 40) {
                    stats.seeds.add(bulk.seed + " " + classes);
                }
                if (stats.reports.size() < 3) {
                    stats.reports.add("replay with " + replayLine(replay, bulk.seed) + "\n" + bulk + trace
                            + "\n  DIFFERENCES:\n    " + String.join("\n    ", differences));
                }
            }
        }
        return stats;
    }

    private static String replayLine(String replay, long seed) {
        return replay + " -Ddiff.seed=" + seed + " -Ddiff.bulks=1";
    }

    private static void runOne(
            Env env,
            DifferentialBulk bulk,
            Subject subject,
            Stats stats,
            List<String> differences,
            StringBuilder trace) {
        Random sides = new Random(bulk.seed * 7_919 + 17);
        Api api = sides.nextInt(10) < (bulk.failPoint != null ? 7 : 4) ? Api.BULK_WRITE : Api.EXECUTE;
        String subjectCollection = env.collection(bulk, "s");

        List<WriteModel<Document>> models = bulk.models(false);
        env.failPoint(bulk.failPoint);
        Result observed;
        try {
            observed = subject.run(env, bulk, subjectCollection, models, api);
        } finally {
            env.failPointOff(bulk.failPoint);
        }
        observed.collection = subjectCollection;
        Set<String> knownIds = assignIds(bulk, models, observed);

        Result expected = oracle(env, bulk, stats);
        List<String> expectedDocuments = documents(env.rawCollection(bulk, expected.collection), knownIds);
        List<String> observedDocuments = documents(env.rawCollection(bulk, subjectCollection), knownIds);

        trace.append("\n  guard API: ")
                .append(api)
                .append("\n  oracle: ")
                .append(expected.oracle)
                .append("\n  expected: ")
                .append(java.util.Arrays.toString(expected.status))
                .append(' ')
                .append(expected.counts(knownIds))
                .append(expected.commandError == null ? "" : " then command error " + describe(expected.commandError))
                .append("\n  guard:    ")
                .append(java.util.Arrays.toString(observed.status))
                .append(' ')
                .append(observed.counts(knownIds))
                .append(observed.thrown == null ? "" : " threw " + describe(observed.thrown))
                .append(observed.writeErrors == null ? "" : " write errors " + observed.writeErrors)
                .append("\n  expected documents: ")
                .append(expectedDocuments)
                .append("\n  guard's documents:  ")
                .append(observedDocuments);

        compare(
                bulk,
                encode(env, bulk),
                api,
                expected,
                observed,
                expectedDocuments,
                observedDocuments,
                knownIds,
                differences);

        if (api == Api.BULK_WRITE) {
            stats.bulkWriteApi++;
        }
        if (bulk.failPoint != null) {
            stats.failPoints++;
            if (expected.commandError != null && expected.commandError.getCode() == bulk.failPoint.errorCode()) {
                stats.failPointsFired++;
            }
        }
        if (bulk.hasPipeline()) {
            stats.pipelines++;
        }
        if (expected.commandError != null) {
            stats.withCommandErrors++;
        }
        if (bulk.hasRepeatedKey()) {
            stats.repeatedKeys++;
        }
        for (Op op : bulk.ops) {
            if (op.isMulti() && op.key() != null) {
                stats.pinnedMulti++;
                if (op.upsert) {
                    stats.pinnedMultiUpserts++;
                }
            }
        }
        boolean writeErrors = false;
        for (String status : expected.status) {
            if (status != null && status.startsWith("FAILED")) {
                writeErrors = true;
                stats.codes.merge(Integer.parseInt(status.substring("FAILED ".length())), 1, Integer::sum);
            }
        }
        if (writeErrors) {
            stats.withWriteErrors++;
        }
        env.rawCollection(bulk, subjectCollection).drop();
        env.rawCollection(bulk, expected.collection).drop();
    }

    /**
     * Reads back the {@code _id}s the guard gave inserts without one (from the caller's documents, else from the
     * outcome's inserts; else a fresh one for the oracle, whose document is then compared by its content).
     *
     * @return the keys of the ObjectIds the guard gave; any other ObjectId was generated by the server (an upsert)
     */
    private static Set<String> assignIds(DifferentialBulk bulk, List<WriteModel<Document>> models, Result observed) {
        Set<String> known = new java.util.HashSet<>();
        for (int i = 0; i < bulk.ops.size(); i++) {
            Op op = bulk.ops.get(i);
            if (op.kind != DifferentialBulk.Kind.INSERT_WITHOUT_ID) {
                continue;
            }
            Object id = ((InsertOneModel<Document>) models.get(i)).getDocument().get("_id");
            BsonValue assigned = id == null
                    ? observed.inserts.get(i)
                    : new Document("_id", id).toBsonDocument().get("_id");
            if (assigned != null) {
                op.assignedId = assigned;
                known.add(DifferentialBulk.keyOf(assigned));
            } else {
                op.assignedId = new BsonObjectId();
            }
        }
        return known;
    }

    private static void compare(
            DifferentialBulk bulk,
            Encoding encoding,
            Api api,
            Result expected,
            Result observed,
            List<String> expectedDocuments,
            List<String> observedDocuments,
            Set<String> knownIds,
            List<String> differences) {
        if (!expectedDocuments.equals(observedDocuments)) {
            List<String> missing = new ArrayList<>(expectedDocuments);
            missing.removeAll(observedDocuments);
            List<String> extra = new ArrayList<>(observedDocuments);
            extra.removeAll(expectedDocuments);
            differences.add((sameIgnoringFieldOrder(expectedDocuments, observedDocuments)
                            ? "documents (field order only)"
                            : "documents")
                    + ": expected but not in the guard's collection " + missing + "; in it but not expected " + extra);
        }
        boolean stopped = expected.commandError != null;
        if (observed.thrown != null) {
            boolean sameError = stopped
                    && observed.thrown.getClass() == expected.commandError.getClass()
                    && observed.thrown instanceof MongoException thrown
                    && thrown.getCode() == expected.commandError.getCode();
            if (!sameError) {
                differences.add((observed.thrown instanceof MongoException ? "exception: " : "guard threw: ")
                        + describe(observed.thrown)
                        + (stopped
                                ? "; the driver threw " + describe(expected.commandError)
                                : "; the driver threw nothing of the kind"));
            }
        } else if (stopped) {
            // A deliberate difference (README): when a write of the call applied or may have, the guard's bulkWrite
            // throws GuardedBulkWriteException, the driver's command exception as its cause, instead of that
            // exception alone, so that no caller takes a driver exception for "nothing was written".
            if (api == Api.BULK_WRITE) {
                boolean deliberate = observed.writeErrors != null
                        && observed.bulkCause != null
                        && observed.bulkCause.getClass() == expected.commandError.getClass()
                        && observed.bulkCause.getCode() == expected.commandError.getCode()
                        && observed.mayHaveApplied();
                if (!deliberate) {
                    differences.add("exception: the driver's call stopped with " + describe(expected.commandError)
                            + "; the guard's bulkWrite "
                            + (observed.writeErrors == null
                                    ? "returned normally"
                                    : "threw GuardedBulkWriteException (cause "
                                            + (observed.bulkCause == null ? "none" : describe(observed.bulkCause))
                                            + ", may have applied: " + observed.mayHaveApplied() + ")"));
                }
            } else if (!observed.anyFailed()) {
                differences.add("status: the driver's call stopped with " + describe(expected.commandError)
                        + " but the guard reports every write applied");
            }
        }
        if (observed.thrown == null) {
            for (int i = 0; i < expected.status.length; i++) {
                if (expected.status[i] != null && !expected.status[i].equals(observed.status[i])) {
                    String want = expected.status[i].split(" ")[0];
                    String got = String.valueOf(observed.status[i]).split(" ")[0];
                    differences.add("status " + (want.equals(got) ? want + " with another code" : want + " -> " + got)
                            + ": #" + i + " expected " + expected.status[i] + ", guard " + observed.status[i] + "  ("
                            + bulk.ops.get(i).kind + ")");
                }
            }
            if (!stopped && !expected.counts(knownIds).equals(observed.counts(knownIds))) {
                differences.add(
                        "counts: expected " + expected.counts(knownIds) + ", guard " + observed.counts(knownIds));
            }
            if (api == Api.BULK_WRITE && !stopped) {
                List<String> failed = new ArrayList<>();
                for (int i = 0; i < expected.status.length; i++) {
                    if (expected.status[i].startsWith("FAILED")) {
                        failed.add(i + ":" + expected.status[i].substring("FAILED ".length()));
                    }
                }
                List<String> reported = observed.writeErrors == null ? List.of() : observed.writeErrors;
                if (!failed.equals(reported)) {
                    differences.add(
                            "bulkWrite errors: expected write errors " + failed + ", the guard's bulkWrite reported "
                                    + (observed.writeErrors == null ? "none (it returned normally)" : reported));
                }
            }
        }
        compareCommands(bulk, encoding, expected, observed, differences);
    }

    /** How the driver encodes each write of a bulk: its statement, and the command-level fields per command. */
    static final class Encoding {
        /** Per caller index: {command, "command json", json}. */
        final String[][] statements;

        final Map<String, BsonDocument> commandFields = new HashMap<>();

        Encoding(int size) {
            this.statements = new String[size][];
        }
    }

    /**
     * The driver's own encoding of every write: each of the driver's write types (insert, update, replace, delete)
     * sent as one bulk of its own, with the caller's bulk options, to a scratch collection, its command captured.
     * (One bulk per type, so that a command error of one type, as a fail point's, cannot keep another type unsent.)
     */
    static Encoding encode(Env env, DifferentialBulk bulk) {
        Encoding encoding = new Encoding(bulk.ops.size());
        List<WriteModel<Document>> models = bulk.modelsAsSent();
        Map<String, List<Integer>> byType = new LinkedHashMap<>();
        for (int i = 0; i < bulk.ops.size(); i++) {
            String type = switch (bulk.ops.get(i).kind) {
                case INSERT, INSERT_WITHOUT_ID -> "insert";
                case UPDATE_ONE, UPDATE_MANY -> "update";
                case REPLACE_ONE -> "replace";
                default -> "delete";
            };
            byType.computeIfAbsent(type, t -> new ArrayList<>()).add(i);
        }
        MongoCollection<Document> scratch = env.raw.getDatabase("diff_encoding").getCollection("scratch");
        for (List<Integer> indices : byType.values()) {
            List<WriteModel<Document>> part = new ArrayList<>();
            indices.forEach(i -> part.add(models.get(i)));
            env.rawSent.clear();
            try {
                scratch.bulkWrite(part, bulk.options().ordered(false));
            } catch (MongoException e) {
                // Only the statements matter here.
            }
            List<String[]> statements = statements(env.rawSent);
            if (statements.size() < indices.size()) {
                throw new IllegalStateException("encoding: " + indices.size() + " writes, the driver sent "
                        + statements.size() + " statements in " + env.rawSent);
            }
            for (int position = 0; position < indices.size(); position++) {
                encoding.statements[indices.get(position)] = statements.get(position);
            }
            env.rawSent.forEach(
                    command -> encoding.commandFields.putIfAbsent(command.getFirstKey(), commandFields(command)));
        }
        if (++env.encodings % 200 == 0) {
            scratch.drop();
        }
        return encoding;
    }

    /**
     * The guard's statements against the driver's encoding of each write: every statement the guard sent is one of
     * the driver's (same fields, order, values and types), at most as often as the bulk has it; every write the server
     * ran (APPLIED or FAILED in the expectation) was sent. Beyond that, by mode: UNORDERED sends every write;
     * ORDERED_KEYED runs no write it skips; the ordered modes may send a skipped write in an ordered command the
     * server stopped (the guard may group commands differently, CONTRACT.md). The guard's commands are read as
     * {@link RanCommands} cuts them: an ORDERED command's statements after its first write error did not run (a key
     * run the guard sends again). Command-level fields: the caller's
     * comment unchanged (or the guard's own {@code mwg:} one when there is none), bypassDocumentValidation and let as
     * the driver sent them for that command.
     */
    private static void compareCommands(
            DifferentialBulk bulk, Encoding encoding, Result expected, Result observed, List<String> differences) {
        boolean stopped = expected.commandError != null;
        List<String[]> all = new ArrayList<>();
        List<String[]> required = new ArrayList<>();
        List<String[]> allowed = new ArrayList<>();
        for (int i = 0; i < encoding.statements.length; i++) {
            String status = expected.status[i];
            boolean ran = status != null && (status.equals(WriteStatus.APPLIED.name()) || status.startsWith("FAILED"));
            all.add(encoding.statements[i]);
            if (ran || bulk.mode == Mode.UNORDERED && !stopped) {
                required.add(encoding.statements[i]);
            }
            if (ran || bulk.mode != Mode.ORDERED_KEYED || status == null) {
                allowed.add(encoding.statements[i]);
            }
        }
        if (observed.thrown != null && !stopped) {
            required.clear(); // the guard refused the bulk: that is reported already
        }
        List<String[]> guard = statements(observed.commands);
        List<String[]> extra = new ArrayList<>();
        List<String[]> unsent = new ArrayList<>(allowed);
        for (String[] statement : guard) {
            int at = indexOf(unsent, statement[1]);
            if (at >= 0) {
                unsent.remove(at);
            } else {
                extra.add(statement);
            }
        }
        List<String[]> missing = new ArrayList<>(required);
        for (String[] statement : guard) {
            int at = indexOf(missing, statement[1]);
            if (at >= 0) {
                missing.remove(at);
            }
        }
        // One difference per kind (command and field), with how many statements show it and the first example.
        Map<String, List<String>> kinds = new TreeMap<>();
        for (String[] statement : extra) {
            BsonDocument got = BsonDocument.parse(statement[2]);
            String[] twin = closest(missing, statement[0], got);
            if (twin == null) {
                twin = closest(all, statement[0], got);
            }
            if (twin == null || twin[1].equals(statement[1])) {
                String kind = twin == null
                        ? " statement of no write of the bulk"
                        : bulk.mode == Mode.ORDERED_KEYED
                                ? " statement sent for a write expected SKIPPED (not sent)"
                                : " statement sent too often";
                kinds.computeIfAbsent(statement[0] + kind, k -> new ArrayList<>())
                        .add("guard " + statement[1]);
                continue;
            }
            missing.remove(twin);
            for (String field : fieldDifferences(BsonDocument.parse(twin[2]), got)) {
                kinds.computeIfAbsent(statement[0] + " statement " + field, k -> new ArrayList<>())
                        .add("driver " + twin[1] + " / guard " + statement[1]);
            }
        }
        for (String[] statement : missing) {
            kinds.computeIfAbsent(statement[0] + " statement not sent by the guard", k -> new ArrayList<>())
                    .add(statement[1]);
        }
        kinds.forEach(
                (kind, examples) -> differences.add(kind + ": " + examples.size() + "x, e.g. " + examples.get(0)));

        Set<String> reported = new java.util.HashSet<>();
        for (BsonDocument command : observed.commands) {
            BsonDocument want = encoding.commandFields.get(command.getFirstKey());
            if (want == null) {
                continue;
            }
            BsonDocument got = commandFields(command);
            BsonValue comment = got.get("comment");
            if (!want.containsKey("comment")
                    && comment != null
                    && comment.isString()
                    && comment.asString().getValue().startsWith("mwg:")) {
                got.remove("comment");
            }
            if (!want.equals(got) && reported.add(command.getFirstKey())) {
                differences.add(command.getFirstKey() + " command " + fieldDifferences(want, got)
                        + ": sent by the driver with " + want.toJson(DifferentialBulk.CANONICAL)
                        + ", by the guard with " + got.toJson(DifferentialBulk.CANONICAL));
            }
        }
    }

    private static BsonDocument commandFields(BsonDocument command) {
        BsonDocument fields = new BsonDocument();
        for (String field : List.of("comment", "bypassDocumentValidation", "let")) {
            if (command.containsKey(field)) {
                fields.put(field, command.get(field));
            }
        }
        return fields;
    }

    /** Each statement of the write commands as {command, "command json", json}. */
    private static List<String[]> statements(List<BsonDocument> commands) {
        List<String[]> statements = new ArrayList<>();
        for (BsonDocument command : commands) {
            String name = command.getFirstKey();
            String field = switch (name) {
                case "insert" -> "documents";
                case "update" -> "updates";
                default -> "deletes";
            };
            if (command.isArray(field)) {
                for (BsonValue statement : command.getArray(field)) {
                    String json = statement.asDocument().toJson(DifferentialBulk.CANONICAL);
                    statements.add(new String[] {name, name + " " + json, json});
                }
            }
        }
        return statements;
    }

    private static int indexOf(List<String[]> statements, String statement) {
        for (int i = 0; i < statements.size(); i++) {
            if (statements.get(i)[1].equals(statement)) {
                return i;
            }
        }
        return -1;
    }

    /** The statement of the same write (same command, same q or _id) that differs from {@code got} in fewest fields. */
    private static String[] closest(List<String[]> candidates, String command, BsonDocument got) {
        String[] closest = null;
        int fewest = Integer.MAX_VALUE;
        for (String[] candidate : candidates) {
            BsonDocument want = BsonDocument.parse(candidate[2]);
            if (candidate[0].equals(command) && sameWrite(command, want, got)) {
                int differing = want.toJson(DifferentialBulk.CANONICAL).equals(got.toJson(DifferentialBulk.CANONICAL))
                        ? 0
                        : fieldDifferences(want, got).size();
                if (differing < fewest) {
                    closest = candidate;
                    fewest = differing;
                }
            }
        }
        return closest;
    }

    private static boolean sameWrite(String command, BsonDocument driver, BsonDocument guard) {
        if (command.equals("insert")) {
            return Objects.equals(driver.get("_id"), guard.get("_id"));
        }
        return Objects.equals(driver.get("q"), guard.get("q"))
                && (!command.equals("update") || Objects.equals(driver.get("u"), guard.get("u")));
    }

    /** "-collation", "+multi=false", "~hint", "field order": fields the guard dropped, added, changed, or reordered. */
    private static List<String> fieldDifferences(BsonDocument driver, BsonDocument guard) {
        List<String> fields = new ArrayList<>();
        for (String field : driver.keySet()) {
            if (!guard.containsKey(field)) {
                fields.add("-" + field);
            } else if (!driver.get(field).equals(guard.get(field))) {
                fields.add("~" + field);
            }
        }
        for (String field : guard.keySet()) {
            if (!driver.containsKey(field)) {
                BsonValue value = guard.get(field);
                fields.add("+" + field
                        + (value.isBoolean() ? "=" + value.asBoolean().getValue() : ""));
            }
        }
        if (fields.isEmpty()) {
            fields.add("field order");
        }
        return fields;
    }

    /**
     * The collection's documents as canonical extended JSON (types and field order), sorted by key; a document whose
     * {@code _id} the server generated (an upsert without {@code _id}) shows that id as a placeholder.
     */
    private static List<String> documents(MongoCollection<Document> collection, Set<String> knownIds) {
        Map<String, List<String>> byKey = new TreeMap<>();
        for (BsonDocument document :
                collection.withDocumentClass(BsonDocument.class).find()) {
            BsonValue id = document.get("_id");
            String key = DifferentialBulk.keyOf(id);
            if (id.isObjectId() && !knownIds.contains(key)) {
                document.put("_id", new BsonString("<server-generated ObjectId>"));
                key = "~generated";
            }
            byKey.computeIfAbsent(key, k -> new ArrayList<>()).add(document.toJson(DifferentialBulk.CANONICAL));
        }
        List<String> documents = new ArrayList<>();
        byKey.values().forEach(list -> {
            list.sort(null);
            documents.addAll(list);
        });
        return documents;
    }

    private static boolean sameIgnoringFieldOrder(List<String> expected, List<String> observed) {
        List<BsonDocument> left = new ArrayList<>();
        expected.forEach(json -> left.add(BsonDocument.parse(json)));
        List<BsonDocument> right = new ArrayList<>();
        observed.forEach(json -> right.add(BsonDocument.parse(json)));
        return left.size() == right.size() && left.containsAll(right) && right.containsAll(left);
    }

    private static String canonicalId(BsonValue id, Set<String> knownIds) {
        if (id == null) {
            return "null";
        }
        if (id.isObjectId() && !knownIds.contains(DifferentialBulk.keyOf(id))) {
            return "<server-generated ObjectId>";
        }
        return new BsonDocument("v", id)
                .toJson(DifferentialBulk.CANONICAL)
                .replaceFirst("^\\{\"v\": ", "")
                .replaceFirst("}$", "");
    }

    /** "index:code" per write error, by index. */
    private static List<String> errors(List<BulkWriteError> errors) {
        List<BulkWriteError> sorted = new ArrayList<>(errors);
        sorted.sort(java.util.Comparator.comparingInt(BulkWriteError::getIndex));
        List<String> result = new ArrayList<>();
        sorted.forEach(error -> result.add(error.getIndex() + ":" + error.getCode()));
        return result;
    }

    private static String describe(Throwable e) {
        String message = String.valueOf(e.getMessage());
        return e.getClass().getSimpleName() + (e instanceof MongoException m ? " " + m.getCode() : "") + " ("
                + (message.length() > 200 ? message.substring(0, 200) + "..." : message) + ")";
    }
}
