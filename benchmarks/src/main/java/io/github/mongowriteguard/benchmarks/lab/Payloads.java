package io.github.mongowriteguard.benchmarks.lab;

import com.mongodb.client.model.BulkWriteOptions;
import com.mongodb.client.model.InsertOneModel;
import com.mongodb.client.model.WriteModel;
import io.github.mongowriteguard.benchmarks.jmh.CostFreeClients;
import java.io.PrintStream;
import java.lang.management.ManagementFactory;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.bson.Document;
import org.bson.types.Binary;

/**
 * Large payloads, guard against driver, on the cost-free server: {@code count} inserts of a {@code size}-byte binary
 * field, unordered. Per bulk: the write commands the server received, the bytes of every message it received, the
 * median wall time and the bytes the calling thread allocated (the client's encoding; the server runs on its own
 * threads). The guard sends each command as one BSON document, so at most 16 MiB of statements per command; the
 * driver 5.6.5 cuts its OP_MSG document sequence at the same size ({@code CommandMessage.writeOpMsg} passes
 * {@code maxBsonObjectSize} as the splittable size), not at {@code maxMessageSizeBytes} (48,000,000).
 */
final class Payloads {
    /** One case's figures for one path. */
    record Figures(String path, long commands, long bytes, double medianMillis, long allocatedBytes) {}

    /** One case: both paths. */
    record Case(int count, int size, Figures driver, Figures guard) {}

    private Payloads() {}

    /**
     * Runs each case, the two paths' runs interleaved after one warm-up run each.
     *
     * @param cases {@code {count, size}} pairs
     * @param runs  measured runs per path
     * @param out   where the table goes
     * @return the cases
     */
    static List<Case> run(List<int[]> cases, int runs, PrintStream log) {
        List<Case> results = new ArrayList<>();
        for (int[] c : cases) {
            log.println("payloads: " + c[0] + " x " + c[1] + " bytes");
            results.add(run(c[0], c[1], runs));
        }
        return results;
    }

    /** The cases as JSON: each path's figures and the guard / driver ratios. */
    static Map<String, Object> toJson(List<Case> cases, int runs) {
        Map<String, Object> json = new LinkedHashMap<>();
        json.put("runs", runs);
        List<Object> list = new ArrayList<>();
        for (Case c : cases) {
            Map<String, Object> each = new LinkedHashMap<>();
            each.put("count", c.count());
            each.put("size", c.size());
            for (Figures f : List.of(c.driver(), c.guard())) {
                Map<String, Object> figures = new LinkedHashMap<>();
                figures.put("commands", f.commands());
                figures.put("bytesReceived", f.bytes());
                figures.put("medianMillis", f.medianMillis());
                figures.put("allocatedBytes", f.allocatedBytes());
                each.put(f.path(), figures);
            }
            each.put("timeRatio", c.guard().medianMillis() / c.driver().medianMillis());
            each.put("bytesRatio", (double) c.guard().bytes() / c.driver().bytes());
            each.put(
                    "allocationRatio",
                    (double) c.guard().allocatedBytes() / c.driver().allocatedBytes());
            list.add(each);
        }
        json.put("cases", list);
        return json;
    }

    private static Case run(int count, int size, int runs) {
        List<WriteModel<Document>> models = models(count, size);
        BulkWriteOptions options = new BulkWriteOptions().ordered(false);
        try (CostFreeClients driver = CostFreeClients.start("driver");
                CostFreeClients guard = CostFreeClients.start("guard")) {
            driver.bulkWrite(models, options);
            guard.bulkWrite(models, options);
            Map<String, long[]> totals = new LinkedHashMap<>();
            Map<String, double[]> millis = new LinkedHashMap<>();
            for (String path : List.of("driver", "guard")) {
                totals.put(path, new long[3]);
                millis.put(path, new double[runs]);
            }
            for (int run = 0; run < runs; run++) {
                for (String path : List.of("driver", "guard")) {
                    CostFreeClients clients = path.equals("driver") ? driver : guard;
                    long commandsBefore =
                            clients.cluster().truth().commands("insert").size();
                    long bytesBefore = clients.cluster().primary().received()[1];
                    long allocatedBefore = allocated();
                    long start = System.nanoTime();
                    clients.bulkWrite(models, options);
                    millis.get(path)[run] = (System.nanoTime() - start) / 1e6;
                    long[] total = totals.get(path);
                    total[2] += allocated() - allocatedBefore;
                    total[0] += clients.cluster().truth().commands("insert").size() - commandsBefore;
                    total[1] += clients.cluster().primary().received()[1] - bytesBefore;
                }
            }
            return new Case(
                    count, size, figures("driver", totals, millis, runs), figures("guard", totals, millis, runs));
        }
    }

    private static Figures figures(String path, Map<String, long[]> totals, Map<String, double[]> millis, int runs) {
        long[] total = totals.get(path);
        double[] times = millis.get(path).clone();
        Arrays.sort(times);
        return new Figures(path, total[0] / runs, total[1] / runs, times[runs / 2], total[2] / runs);
    }

    /** {@code count} documents, each {@code {_id: i, payload: <size bytes>}}; they share one byte array. */
    static List<WriteModel<Document>> models(int count, int size) {
        byte[] payload = new byte[size];
        new java.util.Random(18).nextBytes(payload);
        List<WriteModel<Document>> models = new ArrayList<>(count);
        for (int i = 0; i < count; i++) {
            models.add(new InsertOneModel<>(new Document("_id", i).append("payload", new Binary(payload))));
        }
        return models;
    }

    private static long allocated() {
        return ((com.sun.management.ThreadMXBean) ManagementFactory.getThreadMXBean()).getCurrentThreadAllocatedBytes();
    }

    static void print(List<Case> cases, int runs, PrintStream out) {
        out.printf(
                "%npayloads: unordered inserts on the cost-free server, per bulk, median of %d interleaved runs per path%n",
                runs);
        out.printf(
                "%-20s %-7s %9s %15s %11s %16s%n",
                "bulk", "path", "commands", "bytes received", "median ms", "client alloc MB");
        for (Case c : cases) {
            String bulk = String.format(
                    "%,d x %s", c.count(), c.size() >= 1 << 20 ? (c.size() >> 20) + " MiB" : (c.size() >> 10) + " KiB");
            for (Figures f : List.of(c.driver(), c.guard())) {
                out.printf(
                        "%-20s %-7s %9d %,15d %11.1f %16.1f%n",
                        bulk, f.path(), f.commands(), f.bytes(), f.medianMillis(), f.allocatedBytes() / 1e6);
            }
            out.printf(
                    "%-20s guard / driver: time %.2f, bytes %.3f, client allocation %.2f%n",
                    "",
                    c.guard().medianMillis() / c.driver().medianMillis(),
                    (double) c.guard().bytes() / c.driver().bytes(),
                    (double) c.guard().allocatedBytes() / c.driver().allocatedBytes());
        }
        out.flush();
    }
}
