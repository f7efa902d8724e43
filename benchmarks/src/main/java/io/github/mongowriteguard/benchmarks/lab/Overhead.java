package io.github.mongowriteguard.benchmarks.lab;

import io.github.mongowriteguard.testkit.EmulatedCluster;
import io.github.mongowriteguard.testkit.EmulatedReplicaSet;
import java.io.PrintStream;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.bson.Document;

/**
 * What the guard costs on a path where it cannot save round trips: one replica set, the same bulk of upserts through
 * the raw driver and through the guard, runs interleaved, the ratio of the medians.
 */
final class Overhead {
    static final List<String> CLIENTS = List.of("driver-ordered", "guarded");
    /** Unmeasured runs per client first, until the JIT has compiled both paths (see {@link Latency#WARM_UP_RUNS}). */
    private static final int WARM_UP_RUNS = 25;

    record Result(int docs, int runs, Map<String, Double> medianMillis, double ratio, String note) {
        Map<String, Object> toJson() {
            Map<String, Object> json = new LinkedHashMap<>();
            json.put("docs", docs);
            json.put("runs", runs);
            List<Object> results = new ArrayList<>();
            medianMillis.forEach((client, millis) -> {
                Map<String, Object> r = new LinkedHashMap<>();
                r.put("client", client);
                r.put("medianMillis", Formula.round2(millis));
                results.add(r);
            });
            json.put("results", results);
            json.put("ratio", Formula.round2(ratio));
            if (note != null) {
                json.put("note", note);
            }
            return json;
        }

        void print(PrintStream out) {
            out.printf(
                    "%noverhead: %d ReplaceOne upserts per bulk on one %s, %d interleaved runs per client after %d warm-up runs%n",
                    docs, note == null ? "emulated replica set" : "deployment", runs, WARM_UP_RUNS);
            out.printf("%-15s %12s%n", "client", "median ms");
            medianMillis.forEach((client, millis) -> out.printf("%-15s %12.2f%n", client, millis));
            out.printf("guarded / driver = %.2f%n", ratio);
            if (note != null) {
                out.println("note: " + note);
            }
        }
    }

    private Overhead() {}

    /** Warm-up and measured rounds (each writes one bulk per client), for the progress bar. */
    static long units(Options.Config config) {
        return WARM_UP_RUNS + (long) config.overhead().runs;
    }

    static Result run(Options.Config config, Progress progress) {
        int docs = config.bulk().docs;
        int runs = config.overhead().runs;
        String uri = config.uri();
        List<Document> documents = Workload.stock(docs, 7);
        Map<String, List<Double>> samples = new LinkedHashMap<>();
        if (uri != null) {
            try (BulkClients clients = new BulkClients(uri, "mongo_write_guard_lab")) {
                measure(clients, documents, runs, samples, progress);
                CLIENTS.forEach(c -> clients.raw()
                        .getDatabase("mongo_write_guard_lab")
                        .getCollection(collection(c))
                        .drop());
            }
        } else {
            try (EmulatedReplicaSet cluster = EmulatedCluster.replicaSet().start();
                    BulkClients clients = new BulkClients(cluster.connectionString(), "lab")) {
                measure(clients, documents, runs, samples, progress);
            }
        }
        Map<String, Double> medians = new LinkedHashMap<>();
        CLIENTS.forEach(client -> medians.put(client, Formula.median(samples.get(client))));
        double ratio = medians.get("guarded") / medians.get("driver-ordered");
        return new Result(docs, runs, medians, ratio, uri == null ? null : "measured on the deployment given by --uri");
    }

    private static void measure(
            BulkClients clients,
            List<Document> documents,
            int runs,
            Map<String, List<Double>> samples,
            Progress progress) {
        progress.phase(
                "overhead: %d ReplaceOne upserts per bulk, %d warm-up and %d measured runs per client, interleaved",
                documents.size(), WARM_UP_RUNS, runs);
        for (int i = 1; i <= WARM_UP_RUNS; i++) {
            CLIENTS.forEach(c -> clients.write(c, collection(c), documents));
            progress.step("overhead: warm-up %d of %d", i, WARM_UP_RUNS);
        }
        for (int run = 1; run <= runs; run++) {
            // Alternate which client goes first, so neither always runs on a warmer or a busier machine.
            List<String> order = run % 2 == 0 ? CLIENTS : List.of(CLIENTS.get(1), CLIENTS.get(0));
            for (String client : order) {
                long start = System.nanoTime();
                clients.write(client, collection(client), documents);
                samples.computeIfAbsent(client, k -> new ArrayList<>()).add((System.nanoTime() - start) / 1e6);
            }
            progress.step("overhead: %d docs, run %d of %d", documents.size(), run, runs);
        }
    }

    private static String collection(String client) {
        return "overhead_" + client.replace('-', '_');
    }
}
