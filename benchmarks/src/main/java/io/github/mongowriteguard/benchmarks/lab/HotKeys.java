package io.github.mongowriteguard.benchmarks.lab;

import com.mongodb.ConnectionString;
import com.mongodb.MongoClientSettings;
import com.mongodb.client.MongoClient;
import com.mongodb.client.MongoClients;
import com.mongodb.client.MongoCollection;
import com.mongodb.client.model.BulkWriteOptions;
import com.mongodb.client.model.ReplaceOneModel;
import com.mongodb.client.model.ReplaceOptions;
import com.mongodb.client.model.UpdateOneModel;
import com.mongodb.client.model.UpdateOptions;
import com.mongodb.client.model.WriteModel;
import com.mongodb.event.CommandListener;
import com.mongodb.event.CommandStartedEvent;
import io.github.mongowriteguard.GuardedCollection;
import io.github.mongowriteguard.WriteGuard;
import io.github.mongowriteguard.WriteGuardSettings;
import io.github.mongowriteguard.outcome.WriteOutcome;
import io.github.mongowriteguard.testkit.EmulatedCluster;
import io.github.mongowriteguard.testkit.EmulatedReplicaSet;
import io.github.mongowriteguard.testkit.EmulatedShardedCluster;
import io.github.mongowriteguard.testkit.sharding.RoutedWrite;
import java.io.PrintStream;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.atomic.AtomicInteger;
import org.bson.Document;

/**
 * Bulks that repeat a key: 3,000 {@code $inc} on one {@code _id} (ORDERED, replica set), and a consumer of a compacted
 * topic (1,000 replacement events over 100 keys, ORDERED, on a replica set and sharded {@code {_id: "hashed"}}). Per client: guarded rounds,
 * write commands, mongos rounds and child batches (sharded), and the median wall time of interleaved runs.
 *
 * <p>Mongos rounds are measured by the emulated mongos, not reported by the guard:
 * {@code RoutingStats.roundsInSequence()}, the rounds of waiting on the longest chain of write commands routed one after
 * another; commands routed side by side (their spans on mongos overlap) count once, as the longest of them.
 */
final class HotKeys {
    /** Interleaved runs per client at most (fewer with a smaller {@code --runs}). */
    static final int MAX_RUNS = 5;

    static final String DATABASE = "lab_hot";

    /** One client's bulk: rounds (the guard's), commands, mongos rounds and child batches (null: not counted). */
    record Row(
            String workload,
            String client,
            int writes,
            Integer rounds,
            int commands,
            Integer mongosRounds,
            Integer childBatches,
            double medianMillis) {}

    /**
     * @param counterWrites the {@code $inc} writes on one {@code _id} (3 x --docs)
     * @param events        the replacement events (--docs), over {@code keys} keys (--docs / 10)
     */
    record Result(int shards, int runs, int counterWrites, int events, int keys, List<Row> rows) {
        Map<String, Object> toJson() {
            Map<String, Object> json = new LinkedHashMap<>();
            json.put("shards", shards);
            json.put("runs", runs);
            json.put("counterWrites", counterWrites);
            json.put("events", events);
            json.put("keys", keys);
            List<Object> results = new ArrayList<>();
            for (Row row : rows) {
                Map<String, Object> r = new LinkedHashMap<>();
                r.put("workload", row.workload());
                r.put("client", row.client());
                r.put("writes", row.writes());
                r.put("rounds", row.rounds());
                r.put("commands", row.commands());
                r.put("mongosRounds", row.mongosRounds());
                r.put("childBatches", row.childBatches());
                r.put("medianMillis", Formula.round1(row.medianMillis()));
                results.add(r);
            }
            json.put("results", results);
            return json;
        }

        void print(PrintStream out) {
            out.printf(
                    "%nhot-keys: %,d $inc on one _id (ORDERED, replica set); %,d replacement events over %d keys"
                            + " (ORDERED; events-rs on a replica set, events sharded {_id: \"hashed\"}, %d shards);"
                            + " after a warm-up run each, median of %d interleaved runs, each starting with the next client%n",
                    counterWrites, events, keys, shards, runs);
            out.printf(
                    "%-9s %-30s %7s %7s %9s %13s %13s %10s%n",
                    "workload",
                    "client",
                    "writes",
                    "rounds",
                    "commands",
                    "mongos rounds",
                    "child batches",
                    "median ms");
            for (Row row : rows) {
                out.printf(
                        "%-9s %-30s %7d %7s %9d %13s %13s %10.1f%n",
                        row.workload(),
                        row.client(),
                        row.writes(),
                        dash(row.rounds()),
                        row.commands(),
                        dash(row.mongosRounds()),
                        dash(row.childBatches()),
                        row.medianMillis());
            }
            out.println("guard (compaction): lastWriteWins, a replacement or delete of an _id makes its earlier"
                    + " replacements in the bulk unnecessary; driver UNORDERED (deduplicated): the articles' last value"
                    + " per _id, sent by the caller; guard (exact, sequential): parallelShardCommands 1, the per-shard"
                    + " commands one after another; mongos rounds: measured by the emulated mongos, commands routed"
                    + " side by side counted once");
        }
    }

    private HotKeys() {}

    static long units(Options.Config config) {
        return 3L * runs(config);
    }

    private static int runs(Options.Config config) {
        return Math.min(MAX_RUNS, config.overhead().runs);
    }

    static String dash(Integer value) {
        return value == null ? "-" : value.toString();
    }

    static Result run(Options.Config config, Progress progress) {
        int shards = config.sharding().shards;
        int runs = runs(config);
        int counterWrites = 3 * config.bulk().docs;
        int eventCount = config.bulk().docs;
        int keys = Math.max(1, eventCount / 10);
        List<Row> rows = new ArrayList<>();
        progress.phase("hot-keys: %,d $inc on one _id, replica set", counterWrites);
        try (EmulatedReplicaSet cluster = EmulatedCluster.replicaSet().start();
                Clients clients = new Clients(cluster.connectionString())) {
            List<WriteModel<Document>> counter = counter(counterWrites);
            rows.addAll(measure(
                    "counter",
                    clients,
                    null,
                    Map.of(
                            "guard (exact)", () -> clients.guarded("c_guard").execute(counter, ordered()),
                            "driver ORDERED", () -> clients.raw("c_ordered").bulkWrite(counter, ordered()),
                            "driver UNORDERED",
                                    () -> clients.raw("c_unordered")
                                            .bulkWrite(counter, new BulkWriteOptions().ordered(false))),
                    List.of("guard (exact)", "driver ORDERED", "driver UNORDERED"),
                    Map.of(
                            "guard (exact)",
                            counterWrites,
                            "driver ORDERED",
                            counterWrites,
                            "driver UNORDERED",
                            counterWrites),
                    runs,
                    progress));
            // The consumer's bulk on a replica set: one place, so every repeated key travels in one ORDERED command.
            List<WriteModel<Document>> events = events(eventCount, keys);
            List<WriteModel<Document>> deduplicated = lastPerId(events);
            Map<String, Runnable> bulks = new LinkedHashMap<>();
            bulks.put("guard (exact)", () -> clients.guarded("r_guard").execute(events, ordered()));
            bulks.put("driver ORDERED", () -> clients.raw("r_ordered").bulkWrite(events, ordered()));
            bulks.put(
                    "driver UNORDERED (deduplicated)",
                    () -> clients.raw("r_dedup").bulkWrite(deduplicated, new BulkWriteOptions().ordered(false)));
            Map<String, Integer> writes = new LinkedHashMap<>();
            bulks.keySet().forEach(client -> writes.put(client, eventCount));
            writes.put("driver UNORDERED (deduplicated)", deduplicated.size());
            rows.addAll(
                    measure("events-rs", clients, null, bulks, List.copyOf(bulks.keySet()), writes, runs, progress));
        }
        progress.phase("hot-keys: %,d events over %d keys, %d shards", eventCount, keys, shards);
        try (EmulatedShardedCluster cluster =
                        EmulatedCluster.sharded().shards(shards).start();
                Clients clients = new Clients(cluster.connectionString())) {
            for (String collection :
                    List.of("e_guard", "e_sequential", "e_compact", "e_unordered_guard", "e_ordered", "e_dedup")) {
                cluster.shardCollection(
                        DATABASE + "." + collection,
                        io.github.mongowriteguard.testkit.sharding.ShardKey.of(
                                new org.bson.BsonDocument("_id", new org.bson.BsonString("hashed"))));
            }
            List<WriteModel<Document>> events = events(eventCount, keys);
            List<WriteModel<Document>> deduplicated = lastPerId(events);
            Map<String, Runnable> bulks = new LinkedHashMap<>();
            bulks.put("guard (exact)", () -> clients.guarded("e_guard").execute(events, ordered()));
            // parallelShardCommands 1: the per-shard commands one after another, as before they went side by side
            bulks.put(
                    "guard (exact, sequential)",
                    () -> clients.sequential("e_sequential").execute(events, ordered()));
            bulks.put(
                    "guard (compaction)", () -> clients.compacting("e_compact").execute(events, ordered()));
            bulks.put(
                    "guard (exact, UNORDERED)",
                    () -> clients.guarded("e_unordered_guard").execute(events, new BulkWriteOptions().ordered(false)));
            bulks.put("driver ORDERED", () -> clients.raw("e_ordered").bulkWrite(events, ordered()));
            bulks.put(
                    "driver UNORDERED (deduplicated)",
                    () -> clients.raw("e_dedup").bulkWrite(deduplicated, new BulkWriteOptions().ordered(false)));
            Map<String, Integer> writes = new LinkedHashMap<>();
            bulks.keySet().forEach(client -> writes.put(client, eventCount));
            writes.put("driver UNORDERED (deduplicated)", deduplicated.size());
            rows.addAll(
                    measure("events", clients, cluster, bulks, List.copyOf(bulks.keySet()), writes, runs, progress));
        }
        return new Result(shards, runs, counterWrites, eventCount, keys, rows);
    }

    private static BulkWriteOptions ordered() {
        return new BulkWriteOptions().ordered(true);
    }

    /**
     * Runs each client's bulk once unmeasured (the JIT's first compilations of the client and of the emulator, which
     * the clients share, otherwise fall on whichever client runs first), then {@code runs} times interleaved, each run
     * starting with the next client in turn, so that no client always follows the same one; counts come from the last
     * run.
     */
    private static List<Row> measure(
            String workload,
            Clients clients,
            EmulatedShardedCluster cluster,
            Map<String, Runnable> bulks,
            List<String> order,
            Map<String, Integer> writes,
            int runs,
            Progress progress) {
        Map<String, double[]> millis = new LinkedHashMap<>();
        Map<String, int[]> counts = new LinkedHashMap<>(); // rounds, commands, mongos rounds, child batches
        order.forEach(client -> millis.put(client, new double[runs]));
        order.forEach(client -> bulks.get(client).run());
        for (int run = 0; run < runs; run++) {
            for (int turn = 0; turn < order.size(); turn++) {
                String client = order.get((run + turn) % order.size());
                if (cluster != null) {
                    cluster.routing().reset();
                }
                clients.commands.set(0);
                clients.lastOutcome = null;
                long start = System.nanoTime();
                bulks.get(client).run();
                millis.get(client)[run] = (System.nanoTime() - start) / 1e6;
                int mongosRounds = 0;
                int childBatches = 0;
                if (cluster != null) {
                    // Measured by the emulated mongos: rounds of waiting, where commands routed side by side (their
                    // spans overlap) count once and commands routed one after another add up.
                    mongosRounds = (int) cluster.routing().roundsInSequence();
                    for (RoutedWrite write : cluster.routing().writes()) {
                        childBatches += write.childBatches();
                    }
                }
                counts.put(client, new int[] {
                    clients.lastOutcome == null ? -1 : clients.lastOutcome.rounds(),
                    clients.commands.get(),
                    mongosRounds,
                    childBatches
                });
            }
            progress.step("hot-keys: %s run %d of %d", workload, run + 1, runs);
        }
        List<Row> rows = new ArrayList<>();
        for (String client : order) {
            int[] c = counts.get(client);
            double[] sorted = millis.get(client).clone();
            Arrays.sort(sorted);
            rows.add(new Row(
                    workload,
                    client,
                    writes.get(client),
                    c[0] < 0 ? null : c[0],
                    c[1],
                    cluster == null ? null : c[2],
                    cluster == null ? null : c[3],
                    sorted[sorted.length / 2]));
        }
        return rows;
    }

    /** {@code count} {@code $inc} upserts on one {@code _id}. */
    static List<WriteModel<Document>> counter(int count) {
        List<WriteModel<Document>> models = new ArrayList<>(count);
        for (int i = 0; i < count; i++) {
            models.add(new UpdateOneModel<>(
                    new Document("_id", "hot"),
                    new Document("$inc", new Document("n", 1)),
                    new UpdateOptions().upsert(true)));
        }
        return models;
    }

    /** {@code count} replacement upserts over {@code keys} keys, interleaved, as a compacted topic delivers them. */
    static List<WriteModel<Document>> events(int count, int keys) {
        List<WriteModel<Document>> models = new ArrayList<>(count);
        for (int i = 0; i < count; i++) {
            int key = i % keys;
            models.add(new ReplaceOneModel<>(
                    new Document("_id", key),
                    new Document("_id", key).append("version", i / keys).append("payload", "v" + i),
                    new ReplaceOptions().upsert(true)));
        }
        return models;
    }

    /** The articles' de-duplication: only the last write per {@code _id}, in the order of their last appearance. */
    static List<WriteModel<Document>> lastPerId(List<WriteModel<Document>> events) {
        Map<Object, WriteModel<Document>> last = new LinkedHashMap<>();
        for (WriteModel<Document> event : events) {
            Object id = ((ReplaceOneModel<Document>) event).getReplacement().get("_id");
            last.remove(id);
            last.put(id, event);
        }
        return new ArrayList<>(last.values());
    }

    /** A raw client and two guarded clients (exact; with compaction), counting the write commands they send. */
    private static final class Clients implements AutoCloseable {
        private static final Set<String> WRITES = Set.of("insert", "update", "delete");
        final AtomicInteger commands = new AtomicInteger();
        volatile WriteOutcome<Document> lastOutcome;
        private final Map<String, Recording> wrapped = new java.util.HashMap<>();
        private final MongoClient raw;
        private final MongoClient guardedClient;
        private final MongoClient compactingClient;
        private final WriteGuard guard = WriteGuard.create();
        private final WriteGuard compacting = WriteGuard.create(
                WriteGuardSettings.builder().lastWriteWins(true).build());
        private final MongoClient sequentialClient;
        private final WriteGuard sequential = WriteGuard.create(
                WriteGuardSettings.builder().parallelShardCommands(1).build());

        Clients(String connectionString) {
            CommandListener counting = new CommandListener() {
                @Override
                public void commandStarted(CommandStartedEvent event) {
                    if (WRITES.contains(event.getCommandName())) {
                        commands.incrementAndGet();
                    }
                }
            };
            raw = MongoClients.create(settings(connectionString, counting).build());
            guardedClient = MongoClients.create(
                    guard.configure(settings(connectionString, counting)).build());
            compactingClient = MongoClients.create(
                    compacting.configure(settings(connectionString, counting)).build());
            sequentialClient = MongoClients.create(
                    sequential.configure(settings(connectionString, counting)).build());
        }

        private static MongoClientSettings.Builder settings(String connectionString, CommandListener listener) {
            return MongoClientSettings.builder()
                    .applyConnectionString(new ConnectionString(connectionString))
                    .addCommandListener(listener);
        }

        MongoCollection<Document> raw(String collection) {
            return raw.getDatabase(DATABASE).getCollection(collection);
        }

        Recording guarded(String collection) {
            return wrap("g:", guard, guardedClient, collection);
        }

        Recording compacting(String collection) {
            return wrap("c:", compacting, compactingClient, collection);
        }

        Recording sequential(String collection) {
            return wrap("s:", sequential, sequentialClient, collection);
        }

        /** Wrapped once per name, so that a measurement does not include wrapping. */
        private Recording wrap(String prefix, WriteGuard by, MongoClient client, String collection) {
            return wrapped.computeIfAbsent(
                    prefix + collection,
                    name -> new Recording(by.guardCollection(
                            client, client.getDatabase(DATABASE).getCollection(collection))));
        }

        /** A guarded collection whose outcome the measurement reads. */
        final class Recording {
            private final GuardedCollection<Document> collection;

            Recording(GuardedCollection<Document> collection) {
                this.collection = collection;
            }

            void execute(List<WriteModel<Document>> models, BulkWriteOptions options) {
                lastOutcome = collection.execute(models, options);
            }
        }

        @Override
        public void close() {
            compactingClient.close();
            sequentialClient.close();
            guardedClient.close();
            raw.close();
        }
    }
}
