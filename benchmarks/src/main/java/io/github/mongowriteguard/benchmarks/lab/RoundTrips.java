package io.github.mongowriteguard.benchmarks.lab;

import io.github.mongowriteguard.testkit.EmulatedCluster;
import io.github.mongowriteguard.testkit.EmulatedShardedCluster;
import io.github.mongowriteguard.testkit.sharding.RoutedWrite;
import java.io.PrintStream;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.bson.Document;

/**
 * Part 1: mongos-to-shard round trips (child batches) and rounds of one hashed-key bulk per client, counted by the
 * emulated mongos, next to 1+(n-1)(1-1/S); and the same for S = 2..8 (the article's table and the report's chart).
 */
final class RoundTrips {
    static final List<Integer> SWEEP_SHARDS = List.of(2, 3, 4, 5, 6, 7, 8);
    static final List<String> SWEEP_CLIENTS = List.of("driver-ordered", "spring-ordered", "guarded");
    static final String DATABASE = "lab";

    record Row(String client, Integer roundTrips, Integer rounds, double millis) {}

    /** One shard count of the sweep: the formula and the measured round trips per client. */
    record SweepPoint(int shards, double formula, Map<String, Integer> roundTrips) {}

    record Result(int shards, int docs, int seed, double formula, List<Row> rows, List<SweepPoint> sweep, String note) {
        Map<String, Object> toJson() {
            Map<String, Object> json = new LinkedHashMap<>();
            json.put("shards", shards);
            json.put("docs", docs);
            json.put("seed", seed);
            json.put("formula", Formula.round3(formula));
            List<Object> results = new ArrayList<>();
            for (Row row : rows) {
                Map<String, Object> r = new LinkedHashMap<>();
                r.put("client", row.client());
                r.put("roundTrips", row.roundTrips());
                r.put("rounds", row.rounds());
                r.put("millis", Formula.round1(row.millis()));
                results.add(r);
            }
            json.put("results", results);
            List<Object> table = new ArrayList<>();
            for (SweepPoint point : sweep) {
                Map<String, Object> p = new LinkedHashMap<>();
                p.put("shards", point.shards());
                p.put("formula", Formula.round3(point.formula()));
                p.put("roundTrips", new LinkedHashMap<>(point.roundTrips()));
                table.add(p);
            }
            json.put("byShards", table);
            if (note != null) {
                json.put("note", note);
            }
            return json;
        }

        void print(PrintStream out) {
            out.printf(
                    "%nroundtrips: one bulk of %d ReplaceOne upserts keyed by _id {productId, storeId}, collection sharded"
                            + " {_id: \"hashed\"} over %d shards (seed %d)%n",
                    docs, shards, seed);
            out.printf(
                    "formula 1+(n-1)(1-1/S) = %.1f ORDERED round trips; UNORDERED: 1 round of S child batches%n",
                    formula);
            out.printf("%-22s %18s %8s %10s%n", "client", "mongos->shard RTs", "rounds", "wall ms");
            for (Row row : rows) {
                out.printf(
                        "%-22s %18s %8s %10.1f%n",
                        row.client(), orDash(row.roundTrips()), orDash(row.rounds()), row.millis());
            }
            out.println("spring-upsert, guarded-spring-upsert: the same documents as Spring's"
                    + " bulkOps(ORDERED).upsert(query(where(\"_id\").is(id)), update), each an updateMany with upsert: true;"
                    + " plain, and through GuardedMongoTemplate");
            out.println(
                    "wall ms: one bulk per client, no latency model, on a JIT still warming up; `latency` measures time");
            if (!sweep.isEmpty()) {
                out.printf(
                        "%nround trips by shard count, n = %d (article: S=2 500.5, 3 667, 4 750.25, 5 800.2, 6 833.5, 8 875.125)%n",
                        docs);
                StringBuilder header = new StringBuilder(String.format("%-6s %10s", "shards", "formula"));
                SWEEP_CLIENTS.forEach(c -> header.append(String.format(" %15s", c)));
                out.println(header);
                for (SweepPoint point : sweep) {
                    StringBuilder line =
                            new StringBuilder(String.format("%-6d %10.3f", point.shards(), point.formula()));
                    SWEEP_CLIENTS.forEach(c -> line.append(
                            String.format(" %15s", orDash(point.roundTrips().get(c)))));
                    out.println(line);
                }
            }
            if (note != null) {
                out.println("note: " + note);
            }
        }
    }

    private static String orDash(Integer value) {
        return value == null ? "-" : value.toString();
    }

    private RoundTrips() {}

    /** The bulks this scenario writes, for the progress bar. */
    static long units(Options.Config config) {
        return config.uri() != null
                ? BulkClients.ALL.size()
                : (long) SWEEP_SHARDS.size() * SWEEP_CLIENTS.size() + BulkClients.ALL.size();
    }

    static Result run(Options.Config config, Progress progress) {
        int shards = config.sharding().shards;
        int docs = config.bulk().docs;
        int seed = config.sharding().seed;
        List<Document> documents = Workload.stock(docs, seed);
        String uri = config.uri();
        if (uri != null) {
            return onRealCluster(uri, shards, docs, seed, documents, progress);
        }
        // The sweep runs first: it also warms the JIT up for the wall times of the rows below.
        progress.phase(
                "roundtrips: one bulk of %d documents per client on S = %d..%d shards (%s)",
                docs, SWEEP_SHARDS.get(0), SWEEP_SHARDS.get(SWEEP_SHARDS.size() - 1), String.join(", ", SWEEP_CLIENTS));
        List<SweepPoint> sweep = new ArrayList<>();
        for (int s : SWEEP_SHARDS) {
            Map<String, Integer> measured = new LinkedHashMap<>();
            try (EmulatedShardedCluster cluster =
                            EmulatedCluster.sharded().shards(s).start();
                    BulkClients clients = new BulkClients(cluster.connectionString(), DATABASE)) {
                for (String client : SWEEP_CLIENTS) {
                    measured.put(
                            client, measure(cluster, clients, client, documents).roundTrips());
                    progress.step("roundtrips: S=%d, %s", s, client);
                }
            }
            sweep.add(new SweepPoint(s, Formula.orderedRoundTrips(docs, s), measured));
        }
        progress.phase("roundtrips: S=%d, %d documents, %s", shards, docs, String.join(", ", BulkClients.ALL));
        List<Row> rows = new ArrayList<>();
        try (EmulatedShardedCluster cluster =
                        EmulatedCluster.sharded().shards(shards).start();
                BulkClients clients = new BulkClients(cluster.connectionString(), DATABASE)) {
            for (String client : BulkClients.ALL) {
                rows.add(measure(cluster, clients, client, documents));
                progress.step("roundtrips: S=%d, %d docs, %s", shards, docs, client);
            }
            String note = sameDocuments(clients, "spring-upsert", "guarded-spring-upsert")
                    ? "guarded-spring-upsert left the same documents as spring-upsert"
                    : "guarded-spring-upsert left OTHER documents than spring-upsert";
            return new Result(shards, docs, seed, Formula.orderedRoundTrips(docs, shards), rows, sweep, note);
        }
    }

    /** Whether two clients' collections hold the same documents. */
    private static boolean sameDocuments(BulkClients clients, String one, String other) {
        var database = clients.raw().getDatabase(DATABASE);
        Document byId = new Document("_id", 1);
        return database.getCollection(collection(one))
                .find()
                .sort(byId)
                .into(new ArrayList<>())
                .equals(database.getCollection(collection(other))
                        .find()
                        .sort(byId)
                        .into(new ArrayList<>()));
    }

    private static String collection(String client) {
        return "stock_" + client.replace('-', '_');
    }

    /** Writes the bulk with one client into its own sharded collection and reads mongos' count of it. */
    private static Row measure(
            EmulatedShardedCluster cluster, BulkClients clients, String client, List<Document> documents) {
        String collection = collection(client);
        clients.shardHashedId(collection);
        cluster.routing().reset();
        long start = System.nanoTime();
        clients.write(client, collection, documents);
        double millis = (System.nanoTime() - start) / 1e6;
        List<RoutedWrite> writes = cluster.routing().writes(DATABASE + "." + collection);
        int roundTrips = writes.stream().mapToInt(RoutedWrite::childBatches).sum();
        int rounds = writes.stream().mapToInt(RoutedWrite::rounds).sum();
        return new Row(client, roundTrips, rounds, millis);
    }

    private static Result onRealCluster(
            String uri, int shards, int docs, int seed, List<Document> documents, Progress progress) {
        List<Row> rows = new ArrayList<>();
        String database = "mongo_write_guard_lab";
        progress.phase("roundtrips (real deployment): one bulk of %d documents per client", docs);
        try (BulkClients clients = new BulkClients(uri, database)) {
            for (String client : BulkClients.ALL) {
                String collection = "stock_" + client.replace('-', '_');
                try {
                    clients.shardHashedId(collection);
                } catch (RuntimeException e) {
                    progress.note(
                            "could not shard %s (%s); measuring anyway",
                            collection, e.getClass().getSimpleName());
                }
                long start = System.nanoTime();
                clients.write(client, collection, documents);
                rows.add(new Row(client, null, null, (System.nanoTime() - start) / 1e6));
                clients.raw().getDatabase(database).getCollection(collection).drop();
                progress.step("roundtrips (real deployment): %s", client);
            }
        }
        return new Result(
                shards,
                docs,
                seed,
                Formula.orderedRoundTrips(docs, shards),
                rows,
                List.of(),
                "real deployment: mongos-to-shard round trips and rounds are counted by the emulated mongos only, so only"
                        + " wall time is measured; the formula uses --shards " + shards);
    }
}
