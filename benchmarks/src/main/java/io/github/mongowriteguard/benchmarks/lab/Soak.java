package io.github.mongowriteguard.benchmarks.lab;

import com.mongodb.client.model.BulkWriteOptions;
import com.mongodb.client.model.Filters;
import com.mongodb.client.model.ReplaceOneModel;
import com.mongodb.client.model.ReplaceOptions;
import com.mongodb.client.model.WriteModel;
import io.github.mongowriteguard.benchmarks.jmh.CostFreeClients;
import io.github.mongowriteguard.copies.CopyLedger;
import java.io.PrintStream;
import java.lang.management.ManagementFactory;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.bson.Document;

/**
 * Millions of writes through one guard on the cost-free server ({@code Storage.NONE}): after every {@code every}
 * writes, the heap after a full GC, the copy ledger's size and the gate's bookkeeping. Flat columns mean the guard
 * keeps nothing per write once a call returned.
 *
 * <p>What is read: {@link CopyLedger#trackedCount()} (copies in flight or possibly running) and
 * {@link CopyLedger#possiblyRunningCount()}, which is what
 * the overlap gate consults (the gate itself keeps no per-copy state). The emulator's own per-command records are
 * cleared at each line, so that the heap is the client's and the (stateless) server's.
 */
final class Soak {
    /** One line of the soak: after {@code writes} writes. */
    record Line(long writes, double seconds, long heapAfterGc, int ledgerTracked, int possiblyRunning) {}

    private Soak() {}

    /**
     * Runs the soak and prints each line as it is measured.
     *
     * @param writes how many writes in all
     * @param batch  writes per {@code bulkWrite} (unordered {@code ReplaceOne} upserts, a new key each)
     * @param every  writes between two lines
     * @param out    where the lines go
     * @return the lines, the first before any write
     */
    static List<Line> run(long writes, int batch, long every, PrintStream out) {
        return run(writes, batch, every, out, out);
    }

    /**
     * As above, the header and each line printed to {@code out} as measured, and a progress line per measured line to
     * {@code log}.
     */
    static List<Line> run(long writes, int batch, long every, PrintStream out, PrintStream log) {
        List<Line> lines = new ArrayList<>();
        try (CostFreeClients clients = CostFreeClients.start("guard")) {
            CopyLedger ledger = clients.guard().getCopies();
            out.printf(
                    "soak: %,d unordered ReplaceOne upserts in bulks of %,d through one guard, cost-free server%n",
                    writes, batch);
            out.printf(
                    "%14s %10s %16s %14s %16s%n",
                    "writes", "seconds", "heap after GC", "ledger copies", "possibly running");
            long started = System.nanoTime();
            Line first = line(0, started, ledger, clients);
            lines.add(first);
            print(out, first);
            BulkWriteOptions options = new BulkWriteOptions().ordered(false);
            long done = 0;
            long nextLine = every;
            while (done < writes) {
                int n = (int) Math.min(batch, writes - done);
                clients.bulkWrite(models(done, n), options);
                done += n;
                if (done >= nextLine || done == writes) {
                    Line line = line(done, started, ledger, clients);
                    lines.add(line);
                    print(out, line);
                    if (log != out) {
                        log.printf("soak: %,d of %,d writes%n", done, writes);
                    }
                    nextLine += every;
                }
            }
        }
        return lines;
    }

    /** The lines as JSON. */
    static Map<String, Object> toJson(long writes, int batch, long every, List<Line> lines) {
        Map<String, Object> json = new LinkedHashMap<>();
        json.put("writes", writes);
        json.put("batch", batch);
        json.put("every", every);
        List<Object> list = new ArrayList<>();
        for (Line line : lines) {
            Map<String, Object> each = new LinkedHashMap<>();
            each.put("writes", line.writes());
            each.put("seconds", line.seconds());
            each.put("heapAfterGcBytes", line.heapAfterGc());
            each.put("ledgerCopies", line.ledgerTracked());
            each.put("possiblyRunning", line.possiblyRunning());
            list.add(each);
        }
        json.put("lines", list);
        return json;
    }

    private static List<WriteModel<Document>> models(long from, int n) {
        List<WriteModel<Document>> models = new ArrayList<>(n);
        ReplaceOptions upsert = new ReplaceOptions().upsert(true);
        for (long id = from; id < from + n; id++) {
            models.add(new ReplaceOneModel<>(
                    Filters.eq("_id", id), new Document("_id", id).append("quantity", id % 1000), upsert));
        }
        return models;
    }

    private static Line line(long writes, long started, CopyLedger ledger, CostFreeClients clients) {
        clients.cluster().truth().reset();
        System.gc();
        System.gc();
        long heap = ManagementFactory.getMemoryMXBean().getHeapMemoryUsage().getUsed();
        return new Line(
                writes,
                (System.nanoTime() - started) / 1e9,
                heap,
                ledger.trackedCount(),
                ledger.possiblyRunningCount());
    }

    private static void print(PrintStream out, Line line) {
        out.printf(
                "%,14d %10.1f %13.1f MiB %14d %16d%n",
                line.writes(),
                line.seconds(),
                line.heapAfterGc() / 1048576.0,
                line.ledgerTracked(),
                line.possiblyRunning());
        out.flush();
    }
}
