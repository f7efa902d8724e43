package io.github.mongowriteguard.benchmarks.lab;

import com.mongodb.ConnectionString;
import com.mongodb.MongoClientSettings;
import com.mongodb.WriteConcern;
import com.mongodb.client.MongoClient;
import com.mongodb.client.MongoClients;
import com.mongodb.client.MongoCollection;
import com.mongodb.client.model.Filters;
import com.mongodb.client.model.Updates;
import io.github.mongowriteguard.GuardedCollection;
import io.github.mongowriteguard.WriteGuard;
import io.github.mongowriteguard.WriteGuardSettings;
import io.github.mongowriteguard.metrics.HeldStructure;
import io.github.mongowriteguard.retry.RetryPolicy;
import java.io.PrintStream;
import java.lang.management.ManagementFactory;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import org.bson.Document;

/**
 * One application instance of the fault soak, in its own JVM so that its heap is its own (the emulated cluster's
 * oplogs grow with every write and stay in the lab's JVM): a queue consumer writing polls of events as ordered bulks
 * through the guard with the README's recipe (settle first, {@link Settling.GuardedConsumer}), a poll at most every
 * {@code pollIntervalMs}, for the given time. After each poll it also marks the poll's keys with one {@code updateMany}
 * ({@code $set}) through the guard's idempotent multi-document retries: the one write whose retry is a new copy behind
 * the overlap gate, so that the gate and the copy ledger's possibly running copies are in the soak too. Every {@code sample} seconds, and once at the start and the end, a
 * sampler thread (while the consumer goes on writing, so what a call holds while it runs is seen too) prints one line
 * {@code sample {json}} on stdout: heap after a full GC, live threads, the guard's held structures, writes so far.
 *
 * <p>Arguments: {@code uri seconds sampleSeconds socketTimeoutMs pollSize keys seed pollIntervalMs}.
 */
public final class SoakInstance {
    static final String DATABASE = "soak";
    static final String COLLECTION = "events";
    static final String NAMESPACE = DATABASE + "." + COLLECTION;

    private SoakInstance() {}

    /**
     * Runs the instance; see the class comment for the arguments.
     *
     * @param args {@code uri seconds sampleSeconds socketTimeoutMs pollSize keys seed pollIntervalMs}
     */
    public static void main(String[] args) {
        String uri = args[0];
        double seconds = Double.parseDouble(args[1]);
        double sampleSeconds = Double.parseDouble(args[2]);
        int socketTimeoutMs = Integer.parseInt(args[3]);
        int pollSize = Integer.parseInt(args[4]);
        int keys = Integer.parseInt(args[5]);
        long seed = Long.parseLong(args[6]);
        long pollIntervalMs = Long.parseLong(args[7]);
        PrintStream out = new PrintStream(System.out, true, StandardCharsets.UTF_8);
        run(uri, seconds, sampleSeconds, socketTimeoutMs, pollSize, keys, seed, pollIntervalMs, out);
        System.exit(0);
    }

    static void run(
            String uri,
            double seconds,
            double sampleSeconds,
            int socketTimeoutMs,
            int pollSize,
            int keys,
            long seed,
            long pollIntervalMs,
            PrintStream out) {
        WriteGuard guard = WriteGuard.create(WriteGuardSettings.builder()
                .retryPolicy(RetryPolicy.builder()
                        .maxAttempts(3)
                        .initialBackoff(Duration.ofMillis(50))
                        .build())
                .build());
        MongoClientSettings.Builder builder = MongoClientSettings.builder()
                .applyConnectionString(new ConnectionString(uri))
                .applicationName("soak-instance")
                .writeConcern(WriteConcern.MAJORITY)
                .applyToSocketSettings(s -> s.readTimeout(socketTimeoutMs, TimeUnit.MILLISECONDS))
                .applyToClusterSettings(s -> s.serverSelectionTimeout(20, TimeUnit.SECONDS));
        guard.configure(builder);
        Counts counts = new Counts();
        // the application's own listener: the overlap gate's currentOp commands, which only the updateMany's retries
        // send
        builder.addCommandListener(new com.mongodb.event.CommandListener() {
            @Override
            public void commandStarted(com.mongodb.event.CommandStartedEvent event) {
                if (event.getCommandName().equals("currentOp")) {
                    counts.gateCurrentOps.incrementAndGet();
                }
            }
        });
        Random random = new Random(seed);
        long started = System.nanoTime();
        long end = started + (long) (seconds * 1e9);
        long sampleNanos = (long) (sampleSeconds * 1e9);
        try (MongoClient client = MongoClients.create(builder.build())) {
            MongoCollection<Document> events = client.getDatabase(DATABASE).getCollection(COLLECTION);
            GuardedCollection<Document> guarded = guard.guardCollection(client, events);
            Settling.GuardedConsumer consumer = new Settling.GuardedConsumer(guarded);
            GuardedCollection<Document> multi = guarded.withIdempotentMultiDocumentRetries();
            out.println("sample " + LabJson.write(sample(guard, started, counts)));
            java.util.concurrent.ScheduledExecutorService sampler =
                    java.util.concurrent.Executors.newSingleThreadScheduledExecutor(r -> {
                        Thread thread = new Thread(r, "soak-sampler");
                        thread.setDaemon(true);
                        return thread;
                    });
            sampler.scheduleAtFixedRate(
                    () -> out.println("sample " + LabJson.write(sample(guard, started, counts))),
                    sampleNanos,
                    sampleNanos,
                    TimeUnit.NANOSECONDS);
            int id = 0;
            while (System.nanoTime() < end) {
                long pollStarted = System.nanoTime();
                List<Settling.Event> poll = new ArrayList<>(pollSize);
                int hot = Math.max(1, keys / 5);
                for (int i = 0; i < pollSize; i++) {
                    int key = random.nextBoolean() ? random.nextInt(hot) : random.nextInt(keys);
                    boolean replacement = random.nextInt(10) < 3;
                    poll.add(new Settling.Event(
                            id++, key, replacement, replacement ? 100 + random.nextInt(900) : 1 + random.nextInt(9)));
                }
                // A fresh tally per poll: its sets would otherwise be the application's own growth, not the guard's.
                Settling.Tally tally = new Settling.Tally();
                try {
                    consumer.write(poll, tally);
                } catch (RuntimeException e) {
                    // what the recipe does not handle (no primary within the server selection timeout): the poll is
                    // dead-lettered, as a consumer's error handler would
                    counts.errors.incrementAndGet();
                    tally.deadLettered.clear();
                    poll.forEach(ev -> tally.deadLettered.add(ev.id()));
                }
                List<Integer> keysOfPoll = new ArrayList<>();
                poll.forEach(ev -> keysOfPoll.add(ev.key()));
                try {
                    multi.updateMany(Filters.in("_id", keysOfPoll), Updates.set("seenAt", id));
                } catch (RuntimeException e) {
                    // the gate found the copy still running (a stall) or could not tell: no second copy was started
                    counts.multiDocumentFailed.incrementAndGet();
                }
                counts.multiDocument.incrementAndGet();
                counts.writes.addAndGet(poll.size());
                counts.polls.incrementAndGet();
                counts.settles.addAndGet(tally.settles);
                counts.resends.addAndGet(tally.resends);
                counts.deadLettered.addAndGet(tally.deadLettered.size());
                counts.unknownLeft.addAndGet(tally.unknownLeft.size());
                long left = pollIntervalMs - (System.nanoTime() - pollStarted) / 1_000_000;
                if (left > 0) {
                    try {
                        Thread.sleep(left);
                    } catch (InterruptedException e) {
                        Thread.currentThread().interrupt();
                        break;
                    }
                }
            }
            sampler.shutdown();
            try {
                sampler.awaitTermination(60, TimeUnit.SECONDS);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
            out.println("sample " + LabJson.write(sample(guard, started, counts)));
        }
        out.println("done");
    }

    /** What the instance did so far; written by the consumer, read by the sampler. */
    static final class Counts {
        final AtomicLong writes = new AtomicLong();
        final AtomicLong polls = new AtomicLong();
        final AtomicLong settles = new AtomicLong();
        final AtomicLong resends = new AtomicLong();
        final AtomicLong deadLettered = new AtomicLong();
        final AtomicLong unknownLeft = new AtomicLong();
        final AtomicLong errors = new AtomicLong();
        final AtomicLong multiDocument = new AtomicLong();
        final AtomicLong multiDocumentFailed = new AtomicLong();
        final AtomicLong gateCurrentOps = new AtomicLong();
    }

    private static Map<String, Object> sample(WriteGuard guard, long started, Counts counts) {
        Map<String, Object> json = new LinkedHashMap<>();
        json.put("seconds", Formula.round1((System.nanoTime() - started) / 1e9));
        json.put("heapAfterGcBytes", usedHeapAfterGc());
        json.put("threads", ManagementFactory.getThreadMXBean().getThreadCount());
        Map<String, Object> held = new LinkedHashMap<>();
        Map<String, Object> bounds = new LinkedHashMap<>();
        for (HeldStructure structure : guard.getHeldStructures()) {
            held.put(structure.name(), structure.size());
            bounds.put(structure.name(), structure.bound());
        }
        json.put("held", held);
        json.put("bounds", bounds);
        json.put("writes", counts.writes.get());
        json.put("polls", counts.polls.get());
        json.put("settles", counts.settles.get());
        json.put("resends", counts.resends.get());
        json.put("deadLettered", counts.deadLettered.get());
        json.put("unknownLeft", counts.unknownLeft.get());
        json.put("errors", counts.errors.get());
        json.put("multiDocument", counts.multiDocument.get());
        json.put("multiDocumentFailed", counts.multiDocumentFailed.get());
        json.put("gateCurrentOps", counts.gateCurrentOps.get());
        return json;
    }

    private static long usedHeapAfterGc() {
        System.gc();
        System.gc();
        return ManagementFactory.getMemoryMXBean().getHeapMemoryUsage().getUsed();
    }
}
