package io.github.mongowriteguard.benchmarks.lab;

import com.mongodb.ConnectionString;
import com.mongodb.MongoClientSettings;
import com.mongodb.client.MongoClient;
import com.mongodb.client.MongoClients;
import com.mongodb.client.MongoCollection;
import io.github.mongowriteguard.GuardedCollection;
import io.github.mongowriteguard.WriteGuard;
import io.github.mongowriteguard.WriteGuardSettings;
import io.github.mongowriteguard.retry.RetryPolicy;
import io.github.mongowriteguard.testkit.EmulatedCluster;
import io.github.mongowriteguard.testkit.EmulatedReplicaSet;
import io.github.mongowriteguard.testkit.stall.Stall;
import io.github.mongowriteguard.testkit.stall.StallHandle;
import io.github.mongowriteguard.testkit.truth.ReceivedCommand;
import io.github.mongowriteguard.testkit.truth.ServerTruth;
import io.github.mongowriteguard.testkit.truth.TxnId;
import java.io.PrintStream;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.TimeUnit;
import java.util.function.Predicate;
import org.bson.Document;

/**
 * Part 2's timeline, scaled down: a stall on the collection longer than the whole run holds every insert; the
 * client's socket timeout fires; the application tries again with a new document each time (a redelivered record
 * whose {@code _id} the driver generates). Counted from the server's side ({@link ServerTruth}): sends, distinct
 * copies (lsid, txnNumber), the most copies running at once, and the documents created once the stall is released.
 */
final class Retries {
    static final String NAMESPACE = "lab.records";

    /** One client's run; {@code timeline} holds each copy's [start, end] in ms from the first attempt. */
    record Row(
            String client,
            String stall,
            boolean retryWrites,
            int appAttempts,
            int sends,
            int copies,
            int maxConcurrentCopies,
            long documents,
            String applicationSaw,
            List<double[]> timeline) {}

    record Result(int appAttempts, int socketTimeoutMs, List<Row> rows, String note) {
        Map<String, Object> toJson() {
            Map<String, Object> json = new LinkedHashMap<>();
            json.put("appAttempts", appAttempts);
            json.put("socketTimeoutMs", socketTimeoutMs);
            List<Object> results = new ArrayList<>();
            for (Row row : rows) {
                Map<String, Object> r = new LinkedHashMap<>();
                r.put("client", row.client());
                r.put("stall", row.stall());
                r.put("retryWrites", row.retryWrites());
                r.put("appAttempts", row.appAttempts());
                r.put("sends", row.sends());
                r.put("copies", row.copies());
                r.put("maxConcurrentCopies", row.maxConcurrentCopies());
                r.put("documents", row.documents());
                r.put("applicationSaw", row.applicationSaw());
                List<Object> timeline = new ArrayList<>();
                row.timeline().forEach(t -> timeline.add(List.of(Formula.round1(t[0]), Formula.round1(t[1]))));
                r.put("copyIntervalsMs", timeline);
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
                    "%nretries: %d application attempts (FixedBackOff(0, %d)) of an insert without _id, socketTimeoutMS=%d,"
                            + " inserts held by a stall longer than the run, then released%n",
                    appAttempts, appAttempts - 1, socketTimeoutMs);
            out.printf(
                    "%-8s %-16s %-11s %6s %7s %14s %10s  %s%n",
                    "client",
                    "stall",
                    "retryWrites",
                    "sends",
                    "copies",
                    "maxConcurrent",
                    "documents",
                    "application saw");
            for (Row row : rows) {
                out.printf(
                        "%-8s %-16s %-11s %6d %7d %14d %10d  %s%n",
                        row.client(),
                        row.stall(),
                        row.retryWrites(),
                        row.sends(),
                        row.copies(),
                        row.maxConcurrentCopies(),
                        row.documents(),
                        row.applicationSaw());
            }
            out.println(
                    "article (seed 002): sends <= 2 x executions, copies running at once <= executions; 4 executions"
                            + " -> 8 sends, 4 copies, 4 documents although the application saw 4 failures");
            if (note != null) {
                out.println("note: " + note);
            }
        }
    }

    private Retries() {}

    /** The runs this scenario makes, for the progress bar. */
    static long units(Options.Config config, Options.StallKind fallback) {
        return config.uri() != null
                ? 0
                : 3L * stalls(config.retries().stallOr(fallback)).size();
    }

    private static List<String> stalls(Options.StallKind stall) {
        return stall == Options.StallKind.BOTH ? List.of("uninterruptible", "interruptible") : List.of(stall.label());
    }

    /** @param fallback the stall when {@code --stall} was not given: uninterruptible alone, both in the full run */
    static Result run(Options.Config config, Options.StallKind fallback, Progress progress)
            throws InterruptedException {
        int attempts = config.retries().appAttempts;
        int socketTimeoutMs = config.retries().socketTimeoutMs;
        if (config.uri() != null) {
            return new Result(
                    attempts,
                    socketTimeoutMs,
                    List.of(),
                    "skipped on a real deployment: the scenario needs the"
                            + " emulator's stalls and its server-side count of copies (ServerTruth)");
        }
        List<Row> rows = new ArrayList<>();
        for (String kind : stalls(config.retries().stallOr(fallback))) {
            progress.phase(
                    "retries: %d attempts of one insert held by an %s stall (raw driver with and without"
                            + " retryWrites, guarded)",
                    attempts, kind);
            for (boolean retryWrites : List.of(true, false)) {
                rows.add(runOne("raw", kind, retryWrites, attempts, socketTimeoutMs));
                progress.step("retries: raw driver, retryWrites=%s, %s stall", retryWrites, kind);
            }
            rows.add(runOne("guarded", kind, true, attempts, socketTimeoutMs));
            progress.step("retries: guarded, %s stall", kind);
        }
        return new Result(attempts, socketTimeoutMs, rows, null);
    }

    private static Row runOne(String client, String stallKind, boolean retryWrites, int attempts, int socketTimeoutMs)
            throws InterruptedException {
        Duration longerThanRun = Duration.ofMillis((long) attempts * socketTimeoutMs * 4 + 10_000);
        Stall stall = stallKind.equals("interruptible")
                ? Stall.interruptible(NAMESPACE, longerThanRun)
                : Stall.uninterruptible(NAMESPACE, longerThanRun);
        try (EmulatedReplicaSet cluster = EmulatedCluster.replicaSet().start()) {
            MongoClientSettings.Builder settings = MongoClientSettings.builder()
                    .applyConnectionString(new ConnectionString(cluster.connectionString()))
                    .applicationName("retry-lab-" + client)
                    .retryWrites(retryWrites)
                    .applyToSocketSettings(s -> s.readTimeout(socketTimeoutMs, TimeUnit.MILLISECONDS));
            // The guard's own attempts replace the application loop: the same number, each one the same server copy.
            WriteGuard guard = WriteGuard.create(WriteGuardSettings.builder()
                    .retryPolicy(RetryPolicy.builder()
                            .maxAttempts(attempts)
                            .initialBackoff(Duration.ofMillis(50))
                            .build())
                    .build());
            if (client.equals("guarded")) {
                guard.configure(settings);
            }
            try (MongoClient mongo = MongoClients.create(settings.build())) {
                MongoCollection<Document> records = mongo.getDatabase("lab").getCollection("records");
                mongo.getDatabase("lab").runCommand(new Document("ping", 1)); // connect before the clock starts
                Predicate<ReceivedCommand> inserts =
                        c -> c.commandName().equals("insert") && c.namespace().equals(NAMESPACE);
                ServerTruth truth = cluster.truth();
                StallHandle handle = cluster.primary().stall(stall);
                long t0 = System.nanoTime();
                ApplicationSaw saw;
                try {
                    saw = client.equals("guarded")
                            ? guardedApplication(guard.guardCollection(mongo, records), attempts)
                            : rawApplication(records, attempts);
                } finally {
                    handle.release();
                }
                // Counted once every copy has ended: overlap comes from the server's own start and end times.
                truth.awaitIdle(inserts, longerThanRun);
                int sends = truth.commands(inserts).size();
                Map<TxnId, List<ReceivedCommand>> copies = truth.copies(inserts);
                int maxConcurrent = truth.maxConcurrentCopies(inserts);
                long documents = truth.documentsApplied(inserts);
                List<double[]> timeline = new ArrayList<>();
                for (List<ReceivedCommand> copy : copies.values()) {
                    long start = copy.stream()
                            .mapToLong(ReceivedCommand::startNanos)
                            .min()
                            .orElse(t0);
                    long end = copy.stream()
                            .mapToLong(ReceivedCommand::endNanos)
                            .max()
                            .orElse(start);
                    timeline.add(new double[] {(start - t0) / 1e6, (end - t0) / 1e6});
                }
                return new Row(
                        client,
                        stallKind,
                        retryWrites,
                        attempts,
                        sends,
                        copies.size(),
                        maxConcurrent,
                        documents,
                        client.equals("guarded") ? saw.describeGuarded(attempts) : saw.describe(attempts),
                        timeline);
            }
        }
    }

    /** What the application loop saw: failures by exception type. */
    record ApplicationSaw(int failures, Map<String, Integer> errors) {
        String describeGuarded(int attempts) {
            String call = "1 call, up to " + attempts + " attempts by the guard: ";
            return failures == 0 ? call + "succeeded" : call + String.join(", ", errors.keySet());
        }

        String describe(int attempts) {
            if (failures == 0) {
                return "0 of " + attempts + " attempts failed";
            }
            StringBuilder text = new StringBuilder(failures + " of " + attempts + " attempts failed (");
            errors.forEach((type, count) ->
                    text.append(count).append(" x ").append(type).append(", "));
            text.setLength(text.length() - 2);
            return text.append(')').toString();
        }
    }

    /** The application's retry loop, like Spring Kafka's FixedBackOff(0, attempts - 1): a new record each time. */
    private static ApplicationSaw rawApplication(MongoCollection<Document> records, int attempts) {
        Map<String, Integer> errors = new TreeMap<>();
        int failures = 0;
        for (int attempt = 1; attempt <= attempts; attempt++) {
            try {
                records.insertOne(new Document("record", 42).append("attempt", attempt));
                break; // the application stops retrying after a success
            } catch (RuntimeException e) {
                failures++;
                errors.merge(e.getClass().getSimpleName(), 1, Integer::sum);
            }
        }
        return new ApplicationSaw(failures, errors);
    }

    /**
     * The application through the guard: one call; the guard makes up to {@code attempts} attempts (its retry
     * policy), each resending the same server copy behind the overlap gate.
     */
    private static ApplicationSaw guardedApplication(GuardedCollection<Document> records, int attempts) {
        Map<String, Integer> errors = new TreeMap<>();
        int failures = 0;
        try {
            records.insertOne(new Document("record", 42));
        } catch (RuntimeException e) {
            failures++;
            errors.merge(e.getClass().getSimpleName(), 1, Integer::sum);
        }
        return new ApplicationSaw(failures, errors);
    }
}
