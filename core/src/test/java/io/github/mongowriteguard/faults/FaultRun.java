package io.github.mongowriteguard.faults;

import com.mongodb.client.MongoClient;
import com.mongodb.client.MongoClients;
import com.mongodb.client.MongoCollection;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import org.bson.Document;

/**
 * One seeded, bounded Jepsen-style run: start a deployment, write the workload's set-up documents, run the clients'
 * operations through one kind of writer while the nemesis injects faults, heal everything, wait until nothing runs,
 * then check the ledger against the final documents and the servers' copies.
 *
 * <pre>{@code
 * FaultReport guarded = FaultRun.run(FaultConfig.fromSystemProperties(Topology.REPLICA_SET), Writer.Kind.GUARDED);
 * System.out.println(guarded.describe(20));
 * }</pre>
 *
 * Reusable outside JUnit (a lab scenario): it prints nothing and throws only when the deployment cannot settle.
 */
public final class FaultRun {
    private FaultRun() {}

    public static FaultReport run(FaultConfig config, Writer.Kind writerKind) {
        long started = System.nanoTime();
        Workload workload =
                Workload.generate(new Random(config.seed()), config.clients(), config.operationsPerClient());
        Ledger ledger = new Ledger();
        try (Deployment deployment = Deployment.start(config)) {
            setUp(deployment, workload);
            List<Writer> writers = new ArrayList<>();
            ExecutorService clients = Executors.newFixedThreadPool(config.clients());
            Nemesis nemesis = new Nemesis(
                    deployment,
                    new Random(config.seed() * 31 + writerKind.ordinal()),
                    new ArrayList<>(config.faults()));
            Thread nemesisThread = new Thread(nemesis, "fault-nemesis");
            try {
                for (int c = 0; c < config.clients(); c++) {
                    writers.add(writerKind.create(deployment.connectionString(), config));
                }
                nemesisThread.start();
                List<Future<?>> running = new ArrayList<>();
                for (int c = 0; c < config.clients(); c++) {
                    Writer writer = writers.get(c);
                    List<Operation> operations = workload.clients().get(c);
                    Random pacing = new Random(config.seed() + c);
                    running.add(clients.submit(() -> {
                        for (int order = 0; order < operations.size(); order++) {
                            writer.run(operations.get(order), order, ledger);
                            // Think time, so that faults come and go while an operation count of clients runs.
                            TimeUnit.MILLISECONDS.sleep(config.thinkTime().toMillis() / 2
                                    + pacing.nextInt((int) config.thinkTime().toMillis() + 1));
                        }
                        return null;
                    }));
                }
                for (Future<?> client : running) {
                    client.get();
                }
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new IllegalStateException("interrupted", e);
            } catch (java.util.concurrent.ExecutionException e) {
                throw new IllegalStateException("a client failed", e.getCause());
            } finally {
                nemesis.stop();
                join(nemesisThread);
                clients.shutdownNow();
            }
            deployment.quiesce();
            List<Document> documents = readAll(deployment);
            writers.forEach(Writer::close);
            Map<Fault, Integer> faults = nemesis.injected();
            return Checks.check(
                    config,
                    writerKind,
                    workload,
                    ledger,
                    documents,
                    deployment.clientWriteCommands(),
                    faults,
                    deployment.summary(),
                    Duration.ofNanos(System.nanoTime() - started));
        }
    }

    private static void setUp(Deployment deployment, Workload workload) {
        try (MongoClient client = MongoClients.create(deployment.connectionString())) {
            MongoCollection<Document> collection = client.getDatabase(Workload.DATABASE)
                    .getCollection(Workload.COLLECTION)
                    .withWriteConcern(com.mongodb.WriteConcern.MAJORITY);
            List<Document> documents = workload.setUp();
            for (int from = 0; from < documents.size(); from += 500) {
                collection.insertMany(documents.subList(from, Math.min(documents.size(), from + 500)));
            }
        }
    }

    private static List<Document> readAll(Deployment deployment) {
        try (MongoClient client = MongoClients.create(deployment.connectionString())) {
            return client.getDatabase(Workload.DATABASE)
                    .getCollection(Workload.COLLECTION)
                    .find()
                    .into(new ArrayList<>());
        }
    }

    private static void join(Thread thread) {
        try {
            thread.join(TimeUnit.SECONDS.toMillis(60));
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
