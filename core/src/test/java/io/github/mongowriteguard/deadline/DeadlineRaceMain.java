package io.github.mongowriteguard.deadline;

import com.mongodb.ConnectionString;
import com.mongodb.MongoClientSettings;
import com.mongodb.client.MongoClient;
import com.mongodb.client.MongoClients;
import com.mongodb.client.MongoCollection;
import com.mongodb.client.model.BulkWriteOptions;
import com.mongodb.client.model.InsertOneModel;
import io.github.mongowriteguard.GuardedCollection;
import io.github.mongowriteguard.WriteGuard;
import io.github.mongowriteguard.outcome.IndexOutcome;
import io.github.mongowriteguard.testkit.EmulatedCluster;
import io.github.mongowriteguard.testkit.EmulatedReplicaSet;
import io.github.mongowriteguard.testkit.stall.Stall;
import io.github.mongowriteguard.testkit.stall.StallHandle;
import io.github.mongowriteguard.testkit.truth.ReceivedCommand;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.TimeUnit;
import org.bson.Document;

/**
 * Not a test: counts how an interruptible server stall ends, N times each, for
 * <ul>
 *   <li>the guard's default deadline: socket read timeout T, {@code maxTimeMS} = 2/3 T;</li>
 *   <li>the driver's CSOT, {@code collection.withTimeout(T)}: {@code maxTimeMS} = remaining - minRTT and the socket
 *       read timeout = remaining, so the server's deadline and the client's race.</li>
 * </ul>
 * "server" = the application saw the server's MaxTimeMSExpired (code 50): the write certainly did not apply;
 * "client" = the client stopped waiting first: outcome unknown to the application. Nothing is asserted.
 *
 * <pre>
 * mvn -B -q -o test-compile -pl core -am
 * java -cp core/target/classes:core/target/test-classes:testkit/target/classes:$(cat cp.txt) \
 *     io.github.mongowriteguard.deadline.DeadlineRaceMain [runs=30] [timeoutMs=300]
 * </pre>
 */
public final class DeadlineRaceMain {
    private DeadlineRaceMain() {}

    public static void main(String[] args) throws Exception {
        int runs = args.length > 0 ? Integer.parseInt(args[0]) : 30;
        int timeoutMs = args.length > 1 ? Integer.parseInt(args[1]) : 300;
        try (EmulatedReplicaSet cluster = EmulatedCluster.replicaSet().start()) {
            Map<String, Integer> guard = guardRuns(cluster, runs, timeoutMs);
            Map<String, Integer> csot = csotRuns(cluster, runs, timeoutMs);
            System.out.printf("interruptible stall, %d runs each, client budget %d ms%n", runs, timeoutMs);
            System.out.printf(
                    "  guard  (socket read timeout %d ms, maxTimeMS %d ms): %s%n",
                    timeoutMs, Math.round(timeoutMs * 2.0 / 3.0), guard);
            System.out.printf("  CSOT   (withTimeout %d ms, maxTimeMS = remaining - minRTT): %s%n", timeoutMs, csot);
        }
    }

    private static Map<String, Integer> guardRuns(EmulatedReplicaSet cluster, int runs, int timeoutMs)
            throws Exception {
        WriteGuard guard = WriteGuard.create();
        Map<String, Integer> counts = new TreeMap<>();
        try (MongoClient client = MongoClients.create(guard.configure(MongoClientSettings.builder()
                                .applyConnectionString(new ConnectionString(cluster.connectionString()))
                                .applyToSocketSettings(s -> s.readTimeout(timeoutMs, TimeUnit.MILLISECONDS)))
                        .build());
                StallHandle stall = cluster.primary().stall(Stall.interruptible("lab.guard", Duration.ofSeconds(30)))) {
            GuardedCollection<Document> collection =
                    guard.guardCollection(client, client.getDatabase("lab").getCollection("guard"));
            for (int i = 0; i < runs; i++) {
                IndexOutcome outcome = collection
                        .execute(List.of(new InsertOneModel<>(new Document("run", i))), new BulkWriteOptions())
                        .outcome(0);
                String seen = switch (outcome.status()) {
                    case FAILED ->
                        outcome.errorCode() == 50 ? "server MaxTimeMSExpired" : "failed " + outcome.errorCode();
                    case UNKNOWN -> "client timeout (unknown)";
                    default -> outcome.status().toString();
                };
                counts.merge(seen, 1, Integer::sum);
                awaitIdle(cluster);
            }
        }
        return counts;
    }

    private static Map<String, Integer> csotRuns(EmulatedReplicaSet cluster, int runs, int timeoutMs) throws Exception {
        Map<String, Integer> counts = new TreeMap<>();
        try (MongoClient client = MongoClients.create(MongoClientSettings.builder()
                        .applyConnectionString(new ConnectionString(cluster.connectionString()))
                        .build());
                StallHandle stall = cluster.primary().stall(Stall.interruptible("lab.csot", Duration.ofSeconds(30)))) {
            MongoCollection<Document> collection =
                    client.getDatabase("lab").getCollection("csot").withTimeout(timeoutMs, TimeUnit.MILLISECONDS);
            client.getDatabase("lab").runCommand(new Document("ping", 1)); // connect before the first timed run
            for (int i = 0; i < runs; i++) {
                int before = cluster.truth().commands("insert").size();
                String seen;
                try {
                    collection.insertOne(new Document("run", i));
                    seen = "applied";
                } catch (com.mongodb.MongoException e) {
                    seen = classify(e);
                    if (seen.startsWith("client timeout (Mongo")) {
                        System.out.println("  CSOT run " + i + ": " + e);
                    }
                }
                awaitIdle(cluster);
                List<ReceivedCommand> inserts = cluster.truth().commands("insert");
                String server = inserts.subList(before, inserts.size()).stream()
                        .map(c -> "maxTimeMS=" + c.maxTimeMs() + " code=" + c.errorCode())
                        .toList()
                        .toString();
                counts.merge(seen, 1, Integer::sum);
                if (i < 3 || i == runs - 1) {
                    System.out.println("  CSOT run " + i + ": " + seen + "; server saw " + server);
                }
            }
        }
        return counts;
    }

    /** CSOT reports both endings as MongoOperationTimeoutException; the cause tells which clock fired. */
    private static String classify(Throwable e) {
        for (Throwable cause = e; cause != null; cause = cause.getCause()) {
            if (cause instanceof com.mongodb.MongoExecutionTimeoutException
                    || (cause instanceof com.mongodb.MongoException m && m.getCode() == 50)) {
                return "server MaxTimeMSExpired";
            }
            if (cause instanceof com.mongodb.MongoSocketReadTimeoutException) {
                return "client timeout (socket read)";
            }
        }
        return "client timeout (" + e.getClass().getSimpleName()
                + (e.getCause() == null ? "" : " / " + e.getCause().getClass().getSimpleName()) + ")";
    }

    private static void awaitIdle(EmulatedReplicaSet cluster) throws InterruptedException {
        cluster.truth().awaitIdle(c -> true, Duration.ofSeconds(10));
    }
}
