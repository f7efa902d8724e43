package io.github.mongowriteguard.benchmarks.lab;

import io.github.mongowriteguard.testkit.EmulatedCluster;
import io.github.mongowriteguard.testkit.EmulatedShardedCluster;
import io.github.mongowriteguard.testkit.sharding.RoutedWrite;
import java.io.PrintStream;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.bson.Document;

/**
 * Part 1's Little's-law table, measured: wall time of one bulk for Spring's ORDERED bulk and the guard, with every
 * shard normal and with one shard {@code factor} times slower, as the median of several interleaved repetitions;
 * bulks in flight = arrival rate x time. The emulated mongos sleeps the modelled cost of each child batch.
 */
final class Latency {
    /**
     * Unmeasured bulks per client first, with the latency model off so that they are quick. The emulator's own Java
     * code (mongos routing, the shards' engine) and the client's need them before the JIT has compiled them: measured,
     * a 1,000-document bulk on 5 emulated shards took 30 to 150 ms for its first 20 runs, about 20 ms from the 30th
     * and 13 to 15 ms from the 90th (the UNORDERED driver and the guard run the same emulator code, so their warm-ups
     * add up). Spring's ORDERED bulk runs the same shard code 800 times per bulk, so it needs fewer.
     */
    static final int WARM_UP_RUNS = 50;

    static final int WARM_UP_RUNS_ORDERED = 3;

    /** driver-unordered is the reference: the same routing as the guard, without the guard. */
    static final List<String> CLIENTS = List.of("spring-ordered", "driver-unordered", "guarded");

    static final List<String> SHARD_STATES = List.of("normal", "slow");

    /** One measured case with the article's value and the bound from the measured placement. */
    record Row(
            String client,
            String shard,
            double millis,
            double inFlight,
            double articleMillis,
            double boundMillis,
            double modelledMillis,
            int roundTrips,
            List<Double> samples) {}

    record Result(
            int shards,
            int docs,
            double rttMs,
            double perDocMs,
            double slowFactor,
            double arrivalPerSecond,
            int repetitions,
            List<Row> rows,
            String note) {
        Map<String, Object> toJson() {
            Map<String, Object> json = new LinkedHashMap<>();
            json.put("shards", shards);
            json.put("docs", docs);
            json.put("rttMs", rttMs);
            json.put("perDocMs", perDocMs);
            json.put("slowShardFactor", slowFactor);
            json.put("arrivalPerSecond", arrivalPerSecond);
            json.put("repetitions", repetitions);
            List<Object> results = new ArrayList<>();
            for (Row row : rows) {
                Map<String, Object> r = new LinkedHashMap<>();
                r.put("client", row.client());
                r.put("shard", row.shard());
                r.put("millis", Formula.round1(row.millis()));
                r.put("inFlight", Formula.round2(row.inFlight()));
                r.put("articleMillis", Formula.round1(row.articleMillis()));
                r.put("articleInFlight", Formula.round2(Formula.inFlight(arrivalPerSecond, row.articleMillis())));
                r.put(
                        "slowestShardBoundMillis",
                        Double.isNaN(row.boundMillis()) ? null : Formula.round1(row.boundMillis()));
                r.put(
                        "modelledMillis",
                        Double.isNaN(row.modelledMillis()) ? null : Formula.round1(row.modelledMillis()));
                r.put("roundTrips", row.roundTrips() < 0 ? null : row.roundTrips());
                results.add(r);
            }
            json.put("results", results);
            if (note != null) {
                json.put("note", note);
            }
            return json;
        }

        void print(PrintStream out) {
            out.printf(
                    "%nlatency: %d docs over %d shards, %.2f ms per round trip, %.2f ms per document, slow shard x%s,"
                            + " %s bulks/s arriving; median of %d runs%n",
                    docs, shards, rttMs, perDocMs, trim(slowFactor), trim(arrivalPerSecond), repetitions);
            out.printf(
                    "%-17s %-7s %11s %10s | %12s %10s | %13s %13s %6s%n",
                    "client",
                    "shard",
                    "measured ms",
                    "in flight",
                    "article ms",
                    "in flight",
                    "bound ms",
                    "modelled ms",
                    "RTs");
            for (Row row : rows) {
                out.printf(
                        "%-17s %-7s %11.1f %10.1f | %12.1f %10.1f | %13s %13s %6s%n",
                        row.client(),
                        row.shard(),
                        row.millis(),
                        row.inFlight(),
                        row.articleMillis(),
                        Formula.inFlight(arrivalPerSecond, row.articleMillis()),
                        Double.isNaN(row.boundMillis()) ? "-" : String.format("%.1f", row.boundMillis()),
                        Double.isNaN(row.modelledMillis()) ? "-" : String.format("%.1f", row.modelledMillis()),
                        row.roundTrips() < 0 ? "-" : String.valueOf(row.roundTrips()));
            }
            out.println(
                    "article ms: ORDERED = E[round trips] x rtt + n x per-doc; UNORDERED = rtt + n/S x per-doc; with the"
                            + " slow shard its share costs x factor. bound ms (guarded): the slowest shard of the measured placement,"
                            + " factor x (rtt + its documents x per-doc). modelled ms: mongos' own sum of the slowest batch per round.");
            if (note != null) {
                out.println("note: " + note);
            }
        }
    }

    static String trim(double d) {
        return d == Math.rint(d) ? String.valueOf((long) d) : String.valueOf(d);
    }

    private Latency() {}

    /** The bulks this scenario writes, for the progress bar. */
    static long units(Options.Config config) {
        int repetitions = config.latency().repetitions;
        if (config.uri() != null) {
            return (long) CLIENTS.size() * (1 + repetitions);
        }
        long warmUps = CLIENTS.stream()
                .mapToLong(c -> c.equals("spring-ordered") ? WARM_UP_RUNS_ORDERED : WARM_UP_RUNS)
                .sum();
        return warmUps + (long) SHARD_STATES.size() * repetitions * CLIENTS.size();
    }

    static Result run(Options.Config config, Progress progress) {
        int shards = config.sharding().shards;
        int docs = config.bulk().docs;
        int seed = config.sharding().seed;
        double rtt = config.latency().rttMs;
        double perDoc = config.latency().perDocMs;
        double factor = config.latency().slowShardFactor;
        double arrival = config.latency().arrivalPerSecond;
        int repetitions = config.latency().repetitions;
        List<Document> documents = Workload.stock(docs, seed);
        String uri = config.uri();
        if (uri != null) {
            return onRealCluster(uri, shards, docs, rtt, perDoc, factor, arrival, repetitions, documents, progress);
        }
        Map<String, List<Double>> samples = new LinkedHashMap<>();
        Map<String, RoutedWrite> lastWrite = new LinkedHashMap<>();
        String slowShard = String.format("shard%02d", shards - 1);
        try (EmulatedShardedCluster cluster = EmulatedCluster.sharded()
                        .shards(shards)
                        .roundTrip(nanos(rtt))
                        .perDocument(nanos(perDoc))
                        .start();
                BulkClients clients = new BulkClients(cluster.connectionString(), RoundTrips.DATABASE)) {
            cluster.latency().roundTrip(Duration.ZERO).perDocument(Duration.ZERO);
            progress.phase(
                    "latency: warming up %s (%d, %d and %d unmeasured bulks, latency model off)",
                    String.join(", ", CLIENTS), WARM_UP_RUNS_ORDERED, WARM_UP_RUNS, WARM_UP_RUNS);
            for (String client : CLIENTS) {
                clients.shardHashedId(collection(client));
                int warmUps = client.equals("spring-ordered") ? WARM_UP_RUNS_ORDERED : WARM_UP_RUNS;
                for (int warmUp = 1; warmUp <= warmUps; warmUp++) {
                    clients.write(client, collection(client), documents); // connections, sessions, JIT
                    progress.step("latency: warming up %s, %d of %d", client, warmUp, warmUps);
                }
            }
            cluster.latency().roundTrip(nanos(rtt)).perDocument(nanos(perDoc));
            for (String state : SHARD_STATES) {
                cluster.latency().slowFactor(slowShard, state.equals("slow") ? factor : 1.0);
                progress.phase(
                        "latency: %s, %d interleaved runs per client",
                        state.equals("slow") ? "one shard " + trim(factor) + "x slower" : "every shard normal",
                        repetitions);
                for (int rep = 1; rep <= repetitions; rep++) {
                    // Interleaved: each repetition runs every client once, so drift hits them alike.
                    for (String client : CLIENTS) {
                        cluster.routing().reset();
                        long start = System.nanoTime();
                        clients.write(client, collection(client), documents);
                        double millis = (System.nanoTime() - start) / 1e6;
                        samples.computeIfAbsent(client + "/" + state, k -> new ArrayList<>())
                                .add(millis);
                        lastWrite.put(
                                client + "/" + state,
                                cluster.routing().writes(RoundTrips.DATABASE + "." + collection(client)).stream()
                                        .reduce((a, b) -> b)
                                        .orElse(null));
                        progress.step("latency: %s shard, %s, run %d of %d", state, client, rep, repetitions);
                    }
                }
            }
            cluster.latency().slowFactor(slowShard, 1.0);
        }
        List<Row> rows = new ArrayList<>();
        for (String client : CLIENTS) {
            for (String state : SHARD_STATES) {
                String key = client + "/" + state;
                double median = Formula.median(samples.get(key));
                double f = state.equals("slow") ? factor : 1.0;
                boolean ordered = client.endsWith("ordered") && !client.endsWith("unordered");
                double article = ordered
                        ? Formula.orderedMillis(docs, shards, rtt, perDoc, f)
                        : Formula.unorderedMillis(docs, shards, rtt, perDoc, f);
                RoutedWrite write = lastWrite.get(key);
                double bound = Double.NaN;
                double modelled = Double.NaN;
                int roundTrips = -1;
                if (write != null) {
                    modelled = write.modelledTime().toNanos() / 1e6;
                    roundTrips = write.childBatches();
                    if (!ordered) {
                        bound = Formula.slowestShardMillis(
                                write.documentsPerShard(),
                                state.equals("slow") ? slowShard : null,
                                rtt,
                                perDoc,
                                factor);
                    }
                }
                rows.add(new Row(
                        client,
                        state,
                        median,
                        Formula.inFlight(arrival, median),
                        article,
                        bound,
                        modelled,
                        roundTrips,
                        samples.get(key)));
            }
        }
        return new Result(shards, docs, rtt, perDoc, factor, arrival, repetitions, rows, null);
    }

    static String collection(String client) {
        return "latency_" + client.replace('-', '_');
    }

    private static Duration nanos(double millis) {
        return Duration.ofNanos(Math.round(millis * 1_000_000));
    }

    private static Result onRealCluster(
            String uri,
            int shards,
            int docs,
            double rtt,
            double perDoc,
            double factor,
            double arrival,
            int repetitions,
            List<Document> documents,
            Progress progress) {
        String database = "mongo_write_guard_lab";
        Map<String, List<Double>> samples = new LinkedHashMap<>();
        progress.phase("latency (real deployment): %d interleaved runs per client", repetitions);
        try (BulkClients clients = new BulkClients(uri, database)) {
            for (String client : CLIENTS) {
                try {
                    clients.shardHashedId(collection(client));
                } catch (RuntimeException e) {
                    progress.note(
                            "could not shard %s (%s); measuring anyway",
                            collection(client), e.getClass().getSimpleName());
                }
                clients.write(client, collection(client), documents);
                progress.step("latency (real deployment): warming up %s", client);
            }
            for (int rep = 1; rep <= repetitions; rep++) {
                for (String client : CLIENTS) {
                    long start = System.nanoTime();
                    clients.write(client, collection(client), documents);
                    samples.computeIfAbsent(client, k -> new ArrayList<>()).add((System.nanoTime() - start) / 1e6);
                    progress.step("latency (real deployment): %s, run %d of %d", client, rep, repetitions);
                }
            }
            CLIENTS.forEach(c -> clients.raw()
                    .getDatabase(database)
                    .getCollection(collection(c))
                    .drop());
        }
        List<Row> rows = new ArrayList<>();
        for (String client : CLIENTS) {
            double median = Formula.median(samples.get(client));
            boolean ordered = !client.equals("guarded");
            double article = ordered
                    ? Formula.orderedMillis(docs, shards, rtt, perDoc, 1)
                    : Formula.unorderedMillis(docs, shards, rtt, perDoc, 1);
            rows.add(new Row(
                    client,
                    "normal",
                    median,
                    Formula.inFlight(arrival, median),
                    article,
                    Double.NaN,
                    Double.NaN,
                    -1,
                    samples.get(client)));
        }
        return new Result(
                shards,
                docs,
                rtt,
                perDoc,
                factor,
                arrival,
                repetitions,
                rows,
                "real deployment: the slow shard needs the emulator's latency model, so only the normal case is measured;"
                        + " the article columns use --shards, --rtt-ms and --per-doc-ms as given");
    }
}
