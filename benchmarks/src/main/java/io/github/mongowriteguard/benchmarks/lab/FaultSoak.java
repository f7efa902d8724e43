package io.github.mongowriteguard.benchmarks.lab;

import com.mongodb.client.MongoClient;
import com.mongodb.client.MongoClients;
import io.github.mongowriteguard.testkit.EmulatedCluster;
import io.github.mongowriteguard.testkit.EmulatedShardedCluster;
import io.github.mongowriteguard.testkit.node.EmulatedNode;
import io.github.mongowriteguard.testkit.sharding.ShardKey;
import io.github.mongowriteguard.testkit.sharding.ShardReplicaSet;
import io.github.mongowriteguard.testkit.stall.Stall;
import io.github.mongowriteguard.testkit.stall.StallHandle;
import java.io.BufferedReader;
import java.io.File;
import java.io.InputStreamReader;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import org.bson.BsonArray;
import org.bson.BsonBoolean;
import org.bson.BsonDocument;
import org.bson.BsonInt32;
import org.bson.BsonString;
import org.bson.Document;
import tools.jackson.databind.JsonNode;

/**
 * The soak under faults: one application instance (its own JVM, {@link SoakInstance}: a queue consumer writing ordered
 * bulks through the guard with the README's settle-first recipe, and an opted-in {@code updateMany} per poll) on a
 * replicating sharded cluster of the testkit (2
 * shards of 3 members, {@code w: majority}, a collection sharded {@code {_id: "hashed"}}), for the given time, while
 * this JVM injects a fault every {@code faultEvery} seconds, in turn: an uninterruptible stall on one shard's primary
 * longer than the client's socket timeout, lost replies at mongos, write-concern errors, a stepdown, a failover (the
 * primary stopped, another elected, the old one back as a secondary) and a stalled shard (every write on its primary
 * held). Every {@code sample} seconds the instance reports its heap after a full GC, live threads and every structure
 * its guard holds ({@link io.github.mongowriteguard.WriteGuard#getHeldStructures()}: the copy ledger, the settle
 * hold, the executors, the warnings' slots, the shared catalog's clients, collections, routing tables and chunks);
 * this JVM adds the sessions the shards' primaries used in the last two sample intervals ({@code $listLocalSessions}).
 *
 * <p>Each series is then checked for growth: flat when its second half's mean is within a tolerance of its first
 * half's, and its second half's least-squares slope, carried over half the run, is within the same tolerance. The
 * tolerance is the largest of an absolute floor, a share of the first half's mean and three times the first half's
 * sample-to-sample noise ({@link #TOLERANCES}): for the heap 2 MiB or 5 % (a full GC's used heap moves by a few
 * hundred KiB from one sample to the next; a leak of 100 bytes per write is 20 MiB over a half-hour run); for threads
 * and sessions 2 (the driver's monitor threads come and go with a failover, and it drops a session after a network
 * error), sessions also 10 %; for the guard's counts 2 (a leak of one entry per fault grows by one per fault, dozens
 * per half hour). Noise matters where faults make a series jump: samples fall in or out of a fault at random.
 */
final class FaultSoak {
    static final String NAMESPACE = SoakInstance.NAMESPACE;

    /** The faults, injected in this order, round and round. */
    enum Fault {
        STALL("stall"),
        LOST_REPLIES("lost-replies"),
        WRITE_CONCERN_ERROR("write-concern-error"),
        STEPDOWN("stepdown"),
        FAILOVER("failover"),
        STALLED_SHARD("stalled-shard");

        final String label;

        Fault(String label) {
            this.label = label;
        }
    }

    /** The run's parameters. */
    record Settings(
            double minutes,
            double sampleSeconds,
            double faultEverySeconds,
            int socketTimeoutMs,
            int pollSize,
            int keys,
            String instanceHeap,
            long seed,
            long pollIntervalMs) {
        static final Settings DEFAULT = new Settings(2, 10, 15, 1_000, 50, 50, "256m", 42, 100);
    }

    /** Absolute floor and share of the first half's mean a series may grow by and still be flat. */
    record Tolerance(double absolute, double relative, double deviations) {}

    static final Map<String, Tolerance> TOLERANCES = Map.of(
            "heapAfterGcBytes", new Tolerance(2 * 1_048_576, 0.05, 3),
            "threads", new Tolerance(2, 0, 3),
            "serverSessions", new Tolerance(2, 0.10, 3));

    static final Tolerance COUNT = new Tolerance(2, 0, 3);

    /** One sample: the instance's line and this JVM's additions. */
    record Sample(
            double seconds,
            Map<String, Double> values,
            long writes,
            long settles,
            long deadLettered,
            long multiDocument,
            long multiDocumentFailed,
            long gateCurrentOps,
            int faults) {}

    /** Growth of one series between the run's halves. */
    record Trend(
            String series,
            double firstMean,
            double secondMean,
            double firstMax,
            double secondMax,
            double slopePerMinute,
            double tolerance,
            boolean flat) {
        Map<String, Object> toJson() {
            Map<String, Object> json = new LinkedHashMap<>();
            json.put("series", series);
            json.put("firstHalfMean", Formula.round1(firstMean));
            json.put("secondHalfMean", Formula.round1(secondMean));
            json.put("firstHalfMax", firstMax);
            json.put("secondHalfMax", secondMax);
            json.put("secondHalfSlopePerMinute", Formula.round1(slopePerMinute));
            json.put("tolerance", Formula.round1(tolerance));
            json.put("flat", flat);
            return json;
        }
    }

    record Result(
            Settings settings,
            List<Sample> samples,
            Map<String, Long> bounds,
            Map<String, Integer> faults,
            List<String> faultErrors,
            List<Trend> trends,
            String instanceJvm) {
        boolean flat() {
            return trends.stream().allMatch(Trend::flat);
        }

        Map<String, Object> toJson() {
            Map<String, Object> json = new LinkedHashMap<>();
            json.put("minutes", settings.minutes());
            json.put("sampleSeconds", settings.sampleSeconds());
            json.put("faultEverySeconds", settings.faultEverySeconds());
            json.put("socketTimeoutMs", settings.socketTimeoutMs());
            json.put("pollSize", settings.pollSize());
            json.put("keys", settings.keys());
            json.put("instanceJvm", instanceJvm);
            json.put("faults", faults);
            json.put("faultErrors", faultErrors);
            json.put("bounds", bounds);
            Sample last = samples.isEmpty() ? null : samples.get(samples.size() - 1);
            json.put("writes", last == null ? 0 : last.writes());
            json.put("settles", last == null ? 0 : last.settles());
            json.put("deadLettered", last == null ? 0 : last.deadLettered());
            json.put("multiDocument", last == null ? 0 : last.multiDocument());
            json.put("multiDocumentFailed", last == null ? 0 : last.multiDocumentFailed());
            json.put("gateCurrentOps", last == null ? 0 : last.gateCurrentOps());
            json.put("flat", flat());
            List<Object> trendList = new ArrayList<>();
            trends.forEach(t -> trendList.add(t.toJson()));
            json.put("trends", trendList);
            List<Object> list = new ArrayList<>();
            for (Sample s : samples) {
                Map<String, Object> each = new LinkedHashMap<>();
                each.put("seconds", s.seconds());
                each.put("writes", s.writes());
                each.put("settles", s.settles());
                each.put("deadLettered", s.deadLettered());
                each.put("multiDocumentFailed", s.multiDocumentFailed());
                each.put("faults", s.faults());
                s.values().forEach((k, v) -> each.put(k, v.longValue()));
                list.add(each);
            }
            json.put("samples", list);
            return json;
        }

        void print(PrintStream out) {
            out.printf(
                    "%nsoak: %.1f minutes, one instance (its own JVM, %s) writing polls of %d events over %d keys as"
                            + " ordered bulks through the guard (settle first) on 2 replicating shards x 3 members, w:"
                            + " majority; a fault every %.0f s in turn (%s)%n",
                    settings.minutes(),
                    instanceJvm,
                    settings.pollSize(),
                    settings.keys(),
                    settings.faultEverySeconds(),
                    faults);
            Sample last = samples.isEmpty() ? null : samples.get(samples.size() - 1);
            if (last != null) {
                out.printf(
                        "writes %,d, settles %,d, dead-lettered %,d; updateMany (opted-in retries) %,d, of which ended"
                                + " without a second copy %,d; the gate's currentOp %,d; fault injections that failed %d%n",
                        last.writes(),
                        last.settles(),
                        last.deadLettered(),
                        last.multiDocument(),
                        last.multiDocumentFailed(),
                        last.gateCurrentOps(),
                        faultErrors.size());
            }
            out.printf(
                    "%-28s %14s %14s %12s %12s %14s %12s %6s%n",
                    "series",
                    "1st half mean",
                    "2nd half mean",
                    "1st max",
                    "2nd max",
                    "slope /min",
                    "tolerance",
                    "flat");
            for (Trend t : trends) {
                out.printf(
                        "%-28s %14.1f %14.1f %12.0f %12.0f %14.1f %12.1f %6s%n",
                        t.series(),
                        t.firstMean(),
                        t.secondMean(),
                        t.firstMax(),
                        t.secondMax(),
                        t.slopePerMinute(),
                        t.tolerance(),
                        t.flat() ? "yes" : "NO");
            }
            out.println(
                    "flat: the second half's mean within the tolerance of the first's, and its slope carried over half"
                            + " the run within it too; "
                            + (flat() ? "every series is flat" : "NOT every series is flat"));
        }
    }

    private FaultSoak() {}

    static Result run(Settings settings, PrintStream log) throws Exception {
        ShardKey hashedId = ShardKey.of(new BsonDocument("_id", new BsonString("hashed")));
        try (EmulatedShardedCluster cluster = EmulatedCluster.sharded()
                .shards(2)
                .nodesPerShard(3)
                .replicatingShards(true)
                .shardElectionTimeout(Duration.ofMillis(500))
                .start()) {
            cluster.shardCollection(NAMESPACE, hashedId);
            for (int i = 0; i < 2; i++) {
                cluster.shardSet(i).awaitPrimary(Duration.ofSeconds(30));
            }
            String uri = "mongodb://" + cluster.mongos(0).address();
            Path errFile = Files.createTempFile("soak-instance", ".log");
            String heap = "-Xmx" + settings.instanceHeap();
            List<String> command = List.of(
                    Path.of(System.getProperty("java.home"), "bin", "java").toString(),
                    heap,
                    "-XX:+UseSerialGC",
                    "-cp",
                    System.getProperty("java.class.path"),
                    SoakInstance.class.getName(),
                    uri,
                    Double.toString(settings.minutes() * 60),
                    Double.toString(settings.sampleSeconds()),
                    Integer.toString(settings.socketTimeoutMs()),
                    Integer.toString(settings.pollSize()),
                    Integer.toString(settings.keys()),
                    Long.toString(settings.seed()),
                    Long.toString(settings.pollIntervalMs()));
            log.printf("soak: instance JVM started (%s -XX:+UseSerialGC), its log in %s%n", heap, errFile);
            Process instance = new ProcessBuilder(command)
                    .redirectError(errFile.toFile())
                    .redirectInput(ProcessBuilder.Redirect.from(new File("/dev/null")))
                    .start();
            Faults faults = new Faults(cluster, settings);
            Thread injector = new Thread(() -> faults.loop(log), "soak-faults");
            injector.setDaemon(true);
            List<Sample> samples = new ArrayList<>();
            Map<String, Long> bounds = new LinkedHashMap<>();
            try (MongoClient observer = MongoClients.create(uri)) {
                injector.start();
                try (BufferedReader lines =
                        new BufferedReader(new InputStreamReader(instance.getInputStream(), StandardCharsets.UTF_8))) {
                    String line;
                    while ((line = lines.readLine()) != null) {
                        if (!line.startsWith("sample ")) {
                            continue;
                        }
                        JsonNode node = LabJson.MAPPER.readTree(line.substring("sample ".length()));
                        Map<String, Double> values = new LinkedHashMap<>();
                        values.put(
                                "heapAfterGcBytes", node.get("heapAfterGcBytes").asDouble());
                        values.put("threads", node.get("threads").asDouble());
                        values.put("serverSessions", (double)
                                activeSessions(cluster, (long) (2_000 * settings.sampleSeconds())));
                        forgetCommands(cluster);
                        for (var field : node.get("held").properties()) {
                            values.put(field.getKey(), field.getValue().asDouble());
                        }
                        for (var field : node.get("bounds").properties()) {
                            bounds.put(field.getKey(), field.getValue().asLong());
                        }
                        Sample sample = new Sample(
                                node.get("seconds").asDouble(),
                                values,
                                node.get("writes").asLong(),
                                node.get("settles").asLong(),
                                node.get("deadLettered").asLong(),
                                node.get("multiDocument").asLong(),
                                node.get("multiDocumentFailed").asLong(),
                                node.get("gateCurrentOps").asLong(),
                                faults.injected.get());
                        samples.add(sample);
                        log.printf(
                                "soak: %.0f s, %,d writes, heap after GC %.1f MiB, %d faults%n",
                                sample.seconds(),
                                sample.writes(),
                                values.get("heapAfterGcBytes") / 1048576.0,
                                sample.faults());
                    }
                }
            } finally {
                faults.stop();
                injector.join(TimeUnit.SECONDS.toMillis(60));
                if (!instance.waitFor(60, TimeUnit.SECONDS)) {
                    instance.destroyForcibly();
                }
            }
            if (instance.exitValue() != 0 || samples.size() < 2) {
                throw new IllegalStateException("the soak's instance JVM ended with " + instance.exitValue() + " after "
                        + samples.size() + " samples; its log: " + errFile);
            }
            return new Result(
                    settings,
                    samples,
                    bounds,
                    faults.counts(),
                    faults.errors(),
                    trends(samples),
                    heap + " -XX:+UseSerialGC");
        }
    }

    /**
     * The emulator's records of the commands it received, forgotten at each sample: they are the lab's, kept for tests
     * that read them, and would otherwise grow with every write of the run.
     */
    private static void forgetCommands(EmulatedShardedCluster cluster) {
        cluster.mongosTruth().reset();
        for (String shard : cluster.shardNames()) {
            cluster.shardSet(shard).members().forEach(member -> member.truth().reset());
        }
    }

    /** Distinct sessions the shards' primaries used in the last {@code windowMs}. */
    static int activeSessions(EmulatedShardedCluster cluster, long windowMs) {
        Set<String> ids = new HashSet<>();
        long since = System.currentTimeMillis() - windowMs;
        for (String shard : cluster.shardNames()) {
            EmulatedNode primary;
            try {
                primary = cluster.shardSet(shard).primary();
            } catch (RuntimeException e) {
                continue; // no primary now (an election): the next sample counts it
            }
            try (MongoClient direct =
                    MongoClients.create("mongodb://" + primary.address() + "/?directConnection=true")) {
                for (Document session : direct.getDatabase("admin")
                        .aggregate(List.of(new Document("$listLocalSessions", new Document("allUsers", true))))) {
                    java.util.Date lastUse = session.getDate("lastUse");
                    if (lastUse != null && lastUse.getTime() >= since) {
                        ids.add(String.valueOf(
                                session.get("_id", Document.class).get("id")));
                    }
                }
            } catch (RuntimeException e) {
                // a primary stopped between the lookup and the read: counted at the next sample
            }
        }
        return ids.size();
    }

    /** First half against second half, for every series the samples hold (the first sample, before any write, out). */
    static List<Trend> trends(List<Sample> samples) {
        List<Sample> measured = samples.size() > 2 ? samples.subList(1, samples.size()) : samples;
        int half = measured.size() / 2;
        List<Sample> first = measured.subList(0, half);
        List<Sample> second = measured.subList(half, measured.size());
        List<Trend> trends = new ArrayList<>();
        for (String series : measured.get(0).values().keySet()) {
            double[] a = values(first, series);
            double[] b = values(second, series);
            double[] tb = new double[second.size()];
            for (int i = 0; i < tb.length; i++) {
                tb[i] = second.get(i).seconds() / 60;
            }
            double meanA = mean(a);
            double meanB = mean(b);
            double slope = slope(tb, b);
            double halfMinutes = tb.length > 1 ? tb[tb.length - 1] - tb[0] : 0;
            Tolerance tolerance = TOLERANCES.getOrDefault(series, COUNT);
            double allowed = Math.max(
                    Math.max(tolerance.absolute(), tolerance.relative() * meanA), tolerance.deviations() * noise(a));
            boolean flat = meanB - meanA <= allowed && slope * halfMinutes <= allowed;
            trends.add(new Trend(series, meanA, meanB, max(a), max(b), slope, allowed, flat));
        }
        return trends;
    }

    private static double[] values(List<Sample> samples, String series) {
        double[] values = new double[samples.size()];
        for (int i = 0; i < values.length; i++) {
            values[i] = samples.get(i).values().getOrDefault(series, 0.0);
        }
        return values;
    }

    private static double mean(double[] v) {
        double sum = 0;
        for (double x : v) {
            sum += x;
        }
        return v.length == 0 ? 0 : sum / v.length;
    }

    private static double max(double[] v) {
        double max = 0;
        for (double x : v) {
            max = Math.max(max, x);
        }
        return max;
    }

    /**
     * The sample-to-sample noise: the root mean square of successive differences over the square root of 2, which a
     * steady growth hardly raises (unlike a standard deviation, which a trend inflates).
     */
    static double noise(double[] v) {
        if (v.length < 2) {
            return 0;
        }
        double sum = 0;
        for (int i = 1; i < v.length; i++) {
            sum += (v[i] - v[i - 1]) * (v[i] - v[i - 1]);
        }
        return Math.sqrt(sum / (v.length - 1) / 2);
    }

    /** The least-squares slope of {@code y} over {@code x}; 0 for fewer than two points. */
    static double slope(double[] x, double[] y) {
        if (x.length < 2) {
            return 0;
        }
        double mx = mean(x);
        double my = mean(y);
        double num = 0;
        double den = 0;
        for (int i = 0; i < x.length; i++) {
            num += (x[i] - mx) * (y[i] - my);
            den += (x[i] - mx) * (x[i] - mx);
        }
        return den == 0 ? 0 : num / den;
    }

    /** The fault injector: one fault every {@code faultEvery} seconds, in turn, each healed before the next. */
    static final class Faults {
        private final EmulatedShardedCluster cluster;
        private final Settings settings;
        private final AtomicInteger injected = new AtomicInteger();
        private final Map<Fault, AtomicInteger> counts = new LinkedHashMap<>();
        private final List<String> errors = java.util.Collections.synchronizedList(new ArrayList<>());
        private final AtomicReference<Boolean> stopped = new AtomicReference<>(false);

        Faults(EmulatedShardedCluster cluster, Settings settings) {
            this.cluster = cluster;
            this.settings = settings;
            for (Fault fault : Fault.values()) {
                counts.put(fault, new AtomicInteger());
            }
        }

        void stop() {
            stopped.set(true);
        }

        Map<String, Integer> counts() {
            Map<String, Integer> map = new LinkedHashMap<>();
            counts.forEach((fault, n) -> map.put(fault.label, n.get()));
            return map;
        }

        List<String> errors() {
            synchronized (errors) {
                return List.copyOf(errors);
            }
        }

        void loop(PrintStream log) {
            long every = (long) (settings.faultEverySeconds() * 1000);
            int next = 0;
            while (!stopped.get()) {
                if (!sleep(every)) {
                    return;
                }
                Fault fault = Fault.values()[next++ % Fault.values().length];
                try {
                    inject(fault);
                    counts.get(fault).incrementAndGet();
                    injected.incrementAndGet();
                } catch (RuntimeException e) {
                    if (errors.size() < 100) {
                        errors.add(fault.label + ": " + e);
                    }
                    log.printf("soak: fault %s not injected: %s%n", fault.label, e);
                }
            }
        }

        /** Injects one fault and heals it; returns when it is healed (a failover: when the old primary is back). */
        private void inject(Fault fault) {
            int socketMs = settings.socketTimeoutMs();
            ShardReplicaSet shard0 = cluster.shardSet(0);
            ShardReplicaSet shard1 = cluster.shardSet(1);
            switch (fault) {
                case STALL -> {
                    // an uninterruptible stall three socket timeouts long: the copy runs on after the client gave up
                    EmulatedNode primary = shard0.awaitPrimary(Duration.ofSeconds(30));
                    StallHandle handle = primary.stall(Stall.uninterruptible(NAMESPACE, Duration.ofDays(1)));
                    sleep(3L * socketMs);
                    handle.release();
                }
                case LOST_REPLIES -> {
                    // the command runs, its reply to the client is lost: the guard resends the same copy
                    EmulatedNode mongos = cluster.mongos(0);
                    mongos.loseReplies(2, "update");
                    sleep(2L * socketMs);
                    mongos.stopLosingReplies();
                }
                case WRITE_CONCERN_ERROR -> {
                    EmulatedNode primary = shard1.awaitPrimary(Duration.ofSeconds(30));
                    primary.failCommand()
                            .configure(new BsonDocument("configureFailPoint", new BsonString("failCommand"))
                                    .append("mode", new BsonDocument("times", new BsonInt32(2)))
                                    .append(
                                            "data",
                                            new BsonDocument(
                                                            "writeConcernError",
                                                            new BsonDocument("code", new BsonInt32(64))
                                                                    .append(
                                                                            "codeName",
                                                                            new BsonString("WriteConcernFailed"))
                                                                    .append(
                                                                            "errmsg",
                                                                            new BsonString(
                                                                                    "waiting for replication timed out"))
                                                                    .append(
                                                                            "errInfo",
                                                                            new BsonDocument(
                                                                                    "wtimeout", BsonBoolean.TRUE)))
                                                    .append(
                                                            "failCommands",
                                                            new BsonArray(List.of(new BsonString("update"))))));
                    sleep(2L * socketMs);
                    primary.failCommand().off();
                }
                case STEPDOWN -> {
                    shard0.awaitPrimary(Duration.ofSeconds(30));
                    shard0.stepDown(Duration.ofSeconds(2), Duration.ofSeconds(1), true);
                    shard0.awaitPrimary(Duration.ofSeconds(30));
                }
                case FAILOVER -> {
                    EmulatedNode primary = shard1.awaitPrimary(Duration.ofSeconds(30));
                    shard1.stop(primary);
                    shard1.awaitPrimary(Duration.ofSeconds(30));
                    sleep(socketMs);
                    shard1.start(primary);
                }
                case STALLED_SHARD -> {
                    // every write on the shard's primary held (it answers hello, so no election) past the deadline
                    shard0.awaitPrimary(Duration.ofSeconds(30));
                    StallHandle handle = shard0.stallPrimaryWrites();
                    sleep(5L * socketMs);
                    handle.release();
                }
            }
        }

        private boolean sleep(long ms) {
            long end = System.currentTimeMillis() + ms;
            while (!stopped.get()) {
                long left = end - System.currentTimeMillis();
                if (left <= 0) {
                    return true;
                }
                try {
                    Thread.sleep(Math.min(left, 200));
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                    return false;
                }
            }
            return false;
        }
    }
}
