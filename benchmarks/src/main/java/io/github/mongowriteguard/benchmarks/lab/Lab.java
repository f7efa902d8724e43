package io.github.mongowriteguard.benchmarks.lab;

import java.io.PrintStream;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.function.Predicate;

import org.bson.Document;

import com.mongodb.ConnectionString;
import com.mongodb.MongoClientSettings;
import com.mongodb.MongoException;
import com.mongodb.client.MongoClient;
import com.mongodb.client.MongoClients;
import com.mongodb.client.MongoCollection;

import io.github.mongowriteguard.testkit.EmulatedCluster;
import io.github.mongowriteguard.testkit.EmulatedReplicaSet;
import io.github.mongowriteguard.testkit.truth.ReceivedCommand;
import io.github.mongowriteguard.testkit.truth.ServerTruth;

/**
 * The lab: runs the articles' procedures on the embedded emulated cluster and prints what the server saw.
 *
 * <pre>
 * java -jar benchmarks/target/lab.jar            # every scenario available so far
 * java -jar benchmarks/target/lab.jar retries    # seed part 2: sends, copies and documents per application retry
 * java -jar benchmarks/target/lab.jar serve      # start the emulated replica set and print its URI
 * </pre>
 */
public final class Lab {
    private static final String APP = "retry-lab";

    private Lab() {
    }

    public static void main(String[] args) throws Exception {
        String command = args.length == 0 ? "all" : args[0];
        PrintStream out = System.out;
        switch (command) {
            case "all":
            case "retries":
                retries(out, 4, 300);
                break;
            case "stale-reads":
                StaleReads.run(out, java.util.Arrays.asList(args).contains("--json"), args);
                break;
            case "serve":
                serve(out);
                break;
            case "--help":
            case "-h":
            case "help":
                out.println("usage: java -jar lab.jar [retries|serve]");
                break;
            default:
                System.err.println("unknown command '" + command + "'; try: java -jar lab.jar help");
                System.exit(2);
        }
    }

    /** Seed part 2, scaled down: a fail point holds inserts longer than the run; the application retries. */
    static void retries(PrintStream out, int attempts, int socketTimeoutMs) throws InterruptedException {
        out.printf("retries: %d application attempts of an insert without _id, socketTimeoutMS=%d, inserts held by a fail point%n",
            attempts, socketTimeoutMs);
        out.printf("%-8s %-12s %6s %7s %16s %10s %s%n", "client", "retryWrites", "sends", "copies", "maxConcurrent", "documents", "application saw");
        for (boolean retryWrites : List.of(true, false)) {
            try (EmulatedReplicaSet cluster = EmulatedCluster.replicaSet().start();
                 MongoClient client = MongoClients.create(MongoClientSettings.builder()
                     .applyConnectionString(new ConnectionString(cluster.connectionString()))
                     .applicationName(APP)
                     .retryWrites(retryWrites)
                     .applyToSocketSettings(s -> s.readTimeout(socketTimeoutMs, TimeUnit.MILLISECONDS))
                     .build())) {
                long blockMs = (long) attempts * socketTimeoutMs * 2 + 2_000;
                client.getDatabase("admin").runCommand(new Document("configureFailPoint", "failCommand")
                    .append("mode", new Document("times", attempts * 2))
                    .append("data", new Document("failCommands", List.of("insert")).append("appName", APP)
                        .append("blockConnection", true).append("blockTimeMS", blockMs)));
                MongoCollection<Document> records = client.getDatabase("lab").getCollection("records");
                int failures = 0;
                for (int attempt = 1; attempt <= attempts; attempt++) {
                    try {
                        records.insertOne(new Document("record", 42));
                    } catch (MongoException e) {
                        failures++;
                    }
                }
                ServerTruth truth = cluster.truth();
                Predicate<ReceivedCommand> inserts = c -> c.commandName().equals("insert") && APP.equals(c.appName());
                int sends = truth.commands(inserts).size();
                int copies = truth.copies(inserts).size();
                int maxConcurrent = truth.maxConcurrentCopies(inserts);
                truth.awaitIdle(inserts, Duration.ofMillis(blockMs + 5_000));
                long documents = records.countDocuments();
                out.printf("%-8s %-12s %6d %7d %16d %10d %d of %d attempts failed%n", "raw", retryWrites, sends, copies,
                    maxConcurrent, documents, failures, attempts);
            }
        }
    }

    static void serve(PrintStream out) throws InterruptedException {
        EmulatedReplicaSet cluster = EmulatedCluster.replicaSet().start();
        CountDownLatch stopped = new CountDownLatch(1);
        Runtime.getRuntime().addShutdownHook(new Thread(() -> {
            cluster.close();
            stopped.countDown();
        }));
        out.println(cluster.connectionString());
        stopped.await();
    }
}
