package io.github.mongowriteguard.benchmarks.lab;

import com.mongodb.ConnectionString;
import com.mongodb.MongoClientSettings;
import com.mongodb.bulk.BulkWriteResult;
import com.mongodb.client.model.BulkWriteOptions;
import com.mongodb.client.model.Filters;
import com.mongodb.client.model.UpdateOneModel;
import com.mongodb.client.model.UpdateOptions;
import com.mongodb.client.model.Updates;
import com.mongodb.client.model.WriteModel;
import com.mongodb.reactivestreams.client.MongoClient;
import com.mongodb.reactivestreams.client.MongoClients;
import com.mongodb.reactivestreams.client.MongoCollection;
import io.github.mongowriteguard.GuardedReactiveCollection;
import io.github.mongowriteguard.WriteGuard;
import io.github.mongowriteguard.testkit.EmulatedCluster;
import io.github.mongowriteguard.testkit.EmulatedShardedCluster;
import io.github.mongowriteguard.testkit.server.Storage;
import io.github.mongowriteguard.testkit.sharding.RoutedWrite;
import io.github.mongowriteguard.testkit.sharding.ShardKey;
import java.io.PrintStream;
import java.lang.management.ManagementFactory;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.function.Supplier;
import org.bson.BsonDocument;
import org.bson.BsonString;
import org.bson.Document;
import org.reactivestreams.Publisher;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;

/**
 * The reactive guard ({@link GuardedReactiveCollection}) against the reactive driver's {@code MongoCollection}, two
 * clients built from the same settings (the guard's through {@link WriteGuard#configure}), in one process:
 *
 * <ol>
 *   <li>time per {@code bulkWrite} of UNORDERED upserts by {@code _id}, on the cost-free server ({@link Storage#NONE})
 *       and on an emulated sharded cluster ({@code {_id: "hashed"}}): paired runs, driver and guard back to back, the
 *       first of each pair alternating; the row's ratio is the median of the pairs' guard / driver ratios
 *       ({@link PairedRatio});
 *   <li>mongos-to-shard round trips (child batches, counted by the emulated mongos) of one ORDERED bulk of upserts by
 *       {@code _id} on that sharded cluster;
 *   <li>throughput on the cost-free server with {@code subscribers} bulks in flight at once (Reactor's
 *       {@code flatMap} with that concurrency): bulks per second, paired windows, guard / driver.
 * </ol>
 */
final class Reactive {
    /** The targets: time at most this ratio, throughput at least {@link #THROUGHPUT_TARGET}. */
    static final double TIME_TARGET = 1.03;

    static final double THROUGHPUT_TARGET = 0.97;

    private static final String DATABASE = "lab_reactive";

    /**
     * What to run.
     *
     * @param sizes            writes per bulk of the time rows
     * @param runs             pairs per time row
     * @param runMillis        a run repeats its bulk until this much time has passed (at least one call)
     * @param shards           shards of the emulated cluster
     * @param roundTripWrites  writes of the ORDERED bulk whose round trips are counted
     * @param subscribers      bulks in flight at once in the throughput rows
     * @param throughputWrites writes per bulk in the throughput rows
     * @param rounds           pairs of throughput windows
     * @param windowMillis     length of one throughput window
     * @param warmupMillis     each path of a row repeats its bulk this long before the row's pairs, so that the JIT
     *                         has compiled both paths (the guard's has more code to compile than the driver's)
     */
    record Settings(
            List<Integer> sizes,
            int runs,
            int runMillis,
            int shards,
            int roundTripWrites,
            int subscribers,
            int throughputWrites,
            int rounds,
            int windowMillis,
            int warmupMillis) {
        static final Settings DEFAULT =
                new Settings(List.of(1, 100, 1_000, 10_000), 11, 100, 5, 1_000, 64, 100, 11, 500, 2_000);
    }

    /** One time row: the median ms per bulk of each path and the paired ratio. */
    record TimeRow(String server, int writes, double driverMillis, double guardMillis, PairedRatio ratio) {}

    /** Child batches mongos sent to shards for one ORDERED bulk, per path. */
    record RoundTripRow(int writes, int shards, int driver, int guard) {}

    /** Bulks per second with {@code subscribers} in flight, median per path, and the paired ratio. */
    record ThroughputRow(
            int subscribers, int writes, double driverPerSecond, double guardPerSecond, PairedRatio ratio) {}

    /** Everything one run found, with the system load average before and after (-1 where the OS has none). */
    record Result(
            Settings settings,
            List<TimeRow> times,
            RoundTripRow roundTrips,
            ThroughputRow throughput,
            double loadBefore,
            double loadAfter) {}

    private Reactive() {}

    /** Both reactive clients on one deployment, same settings; the guard's through its {@link WriteGuard}. */
    private static final class Clients implements AutoCloseable {
        private final MongoClient driverClient;
        private final MongoClient guardClient;
        private final WriteGuard guard = WriteGuard.create();

        Clients(String connectionString) {
            driverClient = MongoClients.create(settings(connectionString).build());
            guardClient = MongoClients.create(
                    guard.configure(settings(connectionString)).build());
        }

        private static MongoClientSettings.Builder settings(String connectionString) {
            return MongoClientSettings.builder().applyConnectionString(new ConnectionString(connectionString));
        }

        MongoCollection<Document> driver(String collection) {
            return driverClient.getDatabase(DATABASE).getCollection(collection);
        }

        GuardedReactiveCollection<Document> guard(String collection) {
            return GuardedReactiveCollection.of(
                    guard, guardClient, guardClient.getDatabase(DATABASE).getCollection(collection));
        }

        @Override
        public void close() {
            driverClient.close();
            guardClient.close();
        }
    }

    /**
     * The two paths' bulk of one row, index 0 the driver's, 1 the guard's: each call of the supplier is a new
     * {@code bulkWrite(...)} call, as an application makes one per bulk. Re-subscribing one publisher would not measure
     * the driver's whole call: its reactive collection builds the operation (every model turned into its write
     * request) when {@code bulkWrite} is called, not when subscribed ({@code MongoOperationPublisher.createWriteOperationMono}
     * calls its operation supplier at once), while the guard plans when subscribed.
     */
    private static List<Supplier<Publisher<BulkWriteResult>>> paths(
            Clients clients, String collection, List<WriteModel<Document>> models, boolean ordered) {
        BulkWriteOptions options = new BulkWriteOptions().ordered(ordered);
        MongoCollection<Document> driver = clients.driver("driver_" + collection);
        GuardedReactiveCollection<Document> guard = clients.guard("guard_" + collection);
        return List.of(() -> driver.bulkWrite(models, options), () -> guard.bulkWrite(models, options));
    }

    static Result run(Settings settings, PrintStream log) {
        double loadBefore = ManagementFactory.getOperatingSystemMXBean().getSystemLoadAverage();
        List<TimeRow> times = new ArrayList<>();
        ThroughputRow throughput;
        log.println("reactive: cost-free server (Storage.NONE)");
        try (var server = EmulatedCluster.replicaSet().storage(Storage.NONE).start();
                Clients clients = new Clients(server.connectionString())) {
            for (int size : settings.sizes()) {
                times.add(time("cost-free", clients, "t" + size, size, settings));
                log.println("reactive: cost-free, " + size + " writes");
            }
            throughput = throughput(clients, settings);
            log.println("reactive: " + settings.subscribers() + " subscribers");
        }
        RoundTripRow roundTrips;
        log.println("reactive: " + settings.shards() + " shards");
        try (EmulatedShardedCluster cluster =
                        EmulatedCluster.sharded().shards(settings.shards()).start();
                Clients clients = new Clients(cluster.connectionString())) {
            List<String> collections = new ArrayList<>(List.of("rt"));
            settings.sizes().forEach(size -> collections.add("t" + size));
            for (String collection : collections) {
                for (String path : List.of("driver_", "guard_")) {
                    cluster.shardCollection(
                            DATABASE + "." + path + collection,
                            ShardKey.of(new BsonDocument("_id", new BsonString("hashed"))));
                }
            }
            roundTrips = roundTrips(cluster, clients, settings);
            log.println("reactive: round trips of an ORDERED bulk");
            for (int size : settings.sizes()) {
                times.add(time(settings.shards() + " shards", clients, "t" + size, size, settings));
                log.println("reactive: " + settings.shards() + " shards, " + size + " writes");
            }
        }
        double loadAfter = ManagementFactory.getOperatingSystemMXBean().getSystemLoadAverage();
        return new Result(settings, times, roundTrips, throughput, loadBefore, loadAfter);
    }

    /** {@code count} upserts by {@code _id} (0 to count - 1), each setting {@code v}. */
    static List<WriteModel<Document>> upserts(int count) {
        UpdateOptions upsert = new UpdateOptions().upsert(true);
        List<WriteModel<Document>> models = new ArrayList<>(count);
        for (int i = 0; i < count; i++) {
            models.add(new UpdateOneModel<>(Filters.eq("_id", i), Updates.set("v", i), upsert));
        }
        return models;
    }

    private static TimeRow time(String server, Clients clients, String collection, int size, Settings settings) {
        List<Supplier<Publisher<BulkWriteResult>>> paths = paths(clients, collection, upserts(size), false);
        for (Supplier<Publisher<BulkWriteResult>> path : paths) {
            // warm-up: the JIT, the routing tables, the documents
            millisPerCall(path, Math.max(settings.runMillis(), settings.warmupMillis()));
        }
        double[][] millis = new double[2][settings.runs()];
        for (int run = 0; run < settings.runs(); run++) {
            for (int turn = 0; turn < 2; turn++) {
                int path = (run + turn) % 2;
                millis[path][run] = millisPerCall(paths.get(path), settings.runMillis());
            }
        }
        return new TimeRow(
                server, size, Perf.median(millis[0]), Perf.median(millis[1]), PairedRatio.of(millis[1], millis[0]));
    }

    /** Subscribes to the bulk again and again, one at a time, for {@code runMillis}; the mean ms per bulk. */
    private static double millisPerCall(Supplier<Publisher<BulkWriteResult>> bulk, int runMillis) {
        long start = System.nanoTime();
        long end = start + runMillis * 1_000_000L;
        int calls = 0;
        long now;
        do {
            Mono.from(bulk.get()).block();
            calls++;
            now = System.nanoTime();
        } while (now < end);
        return (now - start) / 1e6 / calls;
    }

    private static RoundTripRow roundTrips(EmulatedShardedCluster cluster, Clients clients, Settings settings) {
        List<Supplier<Publisher<BulkWriteResult>>> paths =
                paths(clients, "rt", upserts(settings.roundTripWrites()), true);
        int[] childBatches = new int[2];
        for (int path = 0; path < 2; path++) {
            String namespace = DATABASE + "." + (path == 0 ? "driver_rt" : "guard_rt");
            cluster.routing().reset();
            Mono.from(paths.get(path).get()).block();
            childBatches[path] = cluster.routing().writes(namespace).stream()
                    .mapToInt(RoutedWrite::childBatches)
                    .sum();
        }
        return new RoundTripRow(settings.roundTripWrites(), settings.shards(), childBatches[0], childBatches[1]);
    }

    private static ThroughputRow throughput(Clients clients, Settings settings) {
        List<Supplier<Publisher<BulkWriteResult>>> paths =
                paths(clients, "concurrent", upserts(settings.throughputWrites()), false);
        for (Supplier<Publisher<BulkWriteResult>> path : paths) {
            // warm-up
            bulksPerSecond(path, settings.subscribers(), Math.max(settings.windowMillis(), settings.warmupMillis()));
        }
        double[][] rates = new double[2][settings.rounds()];
        for (int round = 0; round < settings.rounds(); round++) {
            for (int turn = 0; turn < 2; turn++) {
                int path = (round + turn) % 2;
                rates[path][round] = bulksPerSecond(paths.get(path), settings.subscribers(), settings.windowMillis());
            }
        }
        return new ThroughputRow(
                settings.subscribers(),
                settings.throughputWrites(),
                Perf.median(rates[0]),
                Perf.median(rates[1]),
                PairedRatio.of(rates[1], rates[0]));
    }

    /**
     * Keeps {@code subscribers} bulks in flight (a new subscription as each completes) until {@code windowMillis} has
     * passed, then waits for those in flight; completed bulks per second over the whole time.
     */
    private static double bulksPerSecond(Supplier<Publisher<BulkWriteResult>> bulk, int subscribers, int windowMillis) {
        long start = System.nanoTime();
        long end = start + windowMillis * 1_000_000L;
        Long completed = Flux.<Integer>generate(sink -> {
                    if (System.nanoTime() < end) {
                        sink.next(1);
                    } else {
                        sink.complete();
                    }
                })
                .flatMap(ignored -> Mono.from(bulk.get()), subscribers)
                .count()
                .block();
        return completed * 1e9 / (System.nanoTime() - start);
    }

    static Map<String, Object> toJson(Result result) {
        Settings s = result.settings();
        Map<String, Object> json = new LinkedHashMap<>();
        json.put("loadAverageBefore", result.loadBefore());
        json.put("loadAverageAfter", result.loadAfter());
        json.put("runs", s.runs());
        json.put("runMillis", s.runMillis());
        json.put("warmupMillis", s.warmupMillis());
        List<Object> times = new ArrayList<>();
        for (TimeRow row : result.times()) {
            Map<String, Object> each = new LinkedHashMap<>();
            each.put("server", row.server());
            each.put("writes", row.writes());
            each.put("driverMillis", row.driverMillis());
            each.put("guardMillis", row.guardMillis());
            ratio(each, row.ratio());
            each.put("verdict", row.ratio().atMost(TIME_TARGET).text());
            times.add(each);
        }
        json.put("time", times);
        RoundTripRow rt = result.roundTrips();
        Map<String, Object> roundTrips = new LinkedHashMap<>();
        roundTrips.put("writes", rt.writes());
        roundTrips.put("shards", rt.shards());
        roundTrips.put("driver", rt.driver());
        roundTrips.put("guard", rt.guard());
        json.put("orderedRoundTrips", roundTrips);
        ThroughputRow tp = result.throughput();
        Map<String, Object> throughput = new LinkedHashMap<>();
        throughput.put("subscribers", tp.subscribers());
        throughput.put("writes", tp.writes());
        throughput.put("rounds", s.rounds());
        throughput.put("windowMillis", s.windowMillis());
        throughput.put("driverBulksPerSecond", tp.driverPerSecond());
        throughput.put("guardBulksPerSecond", tp.guardPerSecond());
        ratio(throughput, tp.ratio());
        throughput.put("verdict", tp.ratio().atLeast(THROUGHPUT_TARGET).text());
        json.put("throughput", throughput);
        return json;
    }

    private static void ratio(Map<String, Object> json, PairedRatio ratio) {
        json.put("ratio", ratio.median());
        json.put("low", ratio.low());
        json.put("high", ratio.high());
        json.put("confidence", ratio.confidence());
    }

    static void print(Result result, PrintStream out) {
        Settings s = result.settings();
        out.printf(
                "%nreactive: reactive guard vs reactive driver, same client settings; load average %.2f before, %.2f"
                        + " after (a loaded machine makes the ratios noisy)%n",
                result.loadBefore(), result.loadAfter());
        out.printf(
                "%n1. bulkWrite of UNORDERED upserts by _id, ms per bulk (median of %d pairs of %d ms runs); target:"
                        + " guard / driver <= %.2f%n",
                s.runs(), s.runMillis(), TIME_TARGET);
        out.printf(
                "%-10s %8s %11s %11s %14s %-17s %s%n",
                "server", "writes", "driver ms", "guard ms", "guard/driver", "95% interval", "verdict");
        for (TimeRow row : result.times()) {
            out.printf(
                    "%-10s %,8d %11.3f %11.3f %14.3f %-17s %s%n",
                    row.server(),
                    row.writes(),
                    row.driverMillis(),
                    row.guardMillis(),
                    row.ratio().median(),
                    row.ratio().interval(),
                    row.ratio().atMost(TIME_TARGET).text());
        }
        RoundTripRow rt = result.roundTrips();
        out.printf(
                "%n2. one ORDERED bulk of %,d upserts by _id on %d shards {_id: \"hashed\"}: mongos-to-shard round trips"
                        + " (child batches, counted by the emulated mongos): driver %,d, guard %,d%n",
                rt.writes(), rt.shards(), rt.driver(), rt.guard());
        ThroughputRow tp = result.throughput();
        out.printf(
                "%n3. %d concurrent subscribers, bulks of %,d UNORDERED upserts, cost-free server (median of %d pairs of"
                        + " %d ms windows); target: guard / driver >= %.2f%n",
                tp.subscribers(), tp.writes(), s.rounds(), s.windowMillis(), THROUGHPUT_TARGET);
        out.printf(
                "bulks per second: driver %,.0f, guard %,.0f; guard / driver %.3f [%s]: %s%n",
                tp.driverPerSecond(),
                tp.guardPerSecond(),
                tp.ratio().median(),
                tp.ratio().interval(),
                tp.ratio().atLeast(THROUGHPUT_TARGET).text());
        out.flush();
    }
}
