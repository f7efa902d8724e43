package io.github.mongowriteguard.benchmarks.lab;

import com.mongodb.ConnectionString;
import com.mongodb.MongoClientSettings;
import com.mongodb.MongoNamespace;
import com.mongodb.client.MongoClient;
import com.mongodb.client.MongoClients;
import com.mongodb.client.MongoCollection;
import com.mongodb.client.model.BulkWriteOptions;
import com.mongodb.client.model.ReplaceOneModel;
import com.mongodb.client.model.ReplaceOptions;
import com.mongodb.client.model.Updates;
import com.mongodb.client.model.WriteModel;
import com.mongodb.event.CommandListener;
import com.mongodb.event.CommandStartedEvent;
import com.mongodb.event.CommandSucceededEvent;
import io.github.mongowriteguard.GuardedCollection;
import io.github.mongowriteguard.WriteGuard;
import io.github.mongowriteguard.internal.ClientPort;
import io.github.mongowriteguard.internal.catalog.ClusterCatalog;
import io.github.mongowriteguard.outcome.WriteOutcome;
import io.github.mongowriteguard.outcome.WriteStatus;
import io.github.mongowriteguard.testkit.EmulatedCluster;
import io.github.mongowriteguard.testkit.EmulatedShardedCluster;
import io.github.mongowriteguard.testkit.node.EmulatedNode;
import io.github.mongowriteguard.testkit.sharding.ChunkMap;
import io.github.mongowriteguard.testkit.sharding.RoutedWrite;
import io.github.mongowriteguard.testkit.sharding.ShardKey;
import io.github.mongowriteguard.testkit.sharding.ShardReplicaSet;
import io.github.mongowriteguard.testkit.stall.StallHandle;
import java.io.PrintStream;
import java.lang.management.ManagementFactory;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import org.bson.BsonDocument;
import org.bson.BsonInt32;
import org.bson.BsonString;
import org.bson.Document;
import org.bson.RawBsonDocument;
import org.bson.codecs.BsonDocumentCodec;

/**
 * What a fleet of application instances running the guard costs a sharded cluster, next to the raw driver's fleet: N
 * instances (each its own client and guard) writing through M mongos into S shards whose collection has C chunks.
 *
 * <ul>
 *   <li>config-server load per instance: what each instance's catalog (its JVM's, {@code ClusterCatalog}) sends
 *       through mongos to the config servers ({@code hello}, {@code config.version}, {@code config.collections},
 *       {@code config.chunks}, {@code listCollections}): commands, documents and bytes (command and reply, as the
 *       driver encodes them) for the first read, for each later minute in which nothing moved, and for the minute after
 *       a chunk migration (before the chunks were read by version, an instance read up to 20,001 of them every minute).
 *       The raw driver reads none of them.</li>
 *   <li>per ordered bulk (1,000 replacement events over 100 keys, each instance one bulk): the guard's rounds and
 *       commands, and the child batches mongos sent to shards (its round trips), against the driver's ORDERED bulk.</li>
 *   <li>the overlap gate's {@code currentOp} through mongos: the shards one look asks, by mongos' targeting (every
 *       shard's primary; not counted: the emulator asks them in process). The gate looks only when a copy's outcome is
 *       not known after its deadline.</li>
 *   <li>heap: retained by one instance's client and guard after its bulk (used heap after a full GC, divided by N),
 *       against a raw driver client's; and by the catalog per chunk held.</li>
 * </ul>
 *
 * <p>Numbers measured on the emulator, in one JVM: the instances' catalogs are kept apart ({@code
 * ClusterCatalog.isolated}) as separate JVMs would keep them. Time is the catalog's own clock, advanced a minute at a
 * time: no run waits for a minute to pass.
 */
final class Scale {

    static final String DATABASE = "lab_scale";
    static final String COLLECTION = "events";
    static final int EVENTS = 1_000;
    static final int KEYS = 100;
    /** Minutes after the first read, the migration before the second. */
    static final int MINUTES = 3;

    /** What one run measures. */
    record Settings(int instances, int mongos, List<Integer> shards, List<Integer> chunks) {
        static final Settings DEFAULT = new Settings(4, 2, List.of(5), List.of(1_000));
    }

    /** What the config servers received from one instance in one period, on average over the instances. */
    record Load(double commands, double documents, double bytes) {
        Map<String, Object> toJson() {
            Map<String, Object> json = new LinkedHashMap<>();
            json.put("commands", Formula.round1(commands));
            json.put("documents", Formula.round1(documents));
            json.put("bytes", Math.round(bytes));
            return json;
        }
    }

    /** One cluster shape. */
    record Point(
            int shards,
            int chunks,
            int instances,
            int mongos,
            double setupSeconds,
            Load firstRead,
            Load quietMinute,
            Load migrationMinute,
            double guardRounds,
            double guardCommands,
            double guardChildBatches,
            double driverChildBatches,
            int gateFanOut,
            long guardHeapPerInstance,
            long driverHeapPerInstance,
            double catalogBytesPerChunk,
            List<FaultPhase> faults) {
        Map<String, Object> toJson() {
            Map<String, Object> json = new LinkedHashMap<>();
            json.put("shards", shards);
            json.put("chunks", chunks);
            json.put("instances", instances);
            json.put("mongos", mongos);
            json.put("setupSeconds", Formula.round1(setupSeconds));
            json.put("firstRead", firstRead.toJson());
            json.put("quietMinute", quietMinute.toJson());
            json.put("migrationMinute", migrationMinute.toJson());
            json.put("guardRounds", Formula.round1(guardRounds));
            json.put("guardCommands", Formula.round1(guardCommands));
            json.put("guardChildBatches", Formula.round1(guardChildBatches));
            json.put("driverChildBatches", Formula.round1(driverChildBatches));
            json.put("gateShardsPerLook", gateFanOut);
            json.put("guardHeapPerInstanceBytes", guardHeapPerInstance);
            json.put("driverHeapPerInstanceBytes", driverHeapPerInstance);
            json.put("catalogBytesPerChunk", Formula.round1(catalogBytesPerChunk));
            List<Object> phases = new ArrayList<>();
            faults.forEach(f -> phases.add(f.toJson()));
            json.put("faults", phases);
            return json;
        }
    }

    /**
     * One fault phase, per instance on average: the N guarded instances and then the N raw driver clients each send,
     * at once, one ORDERED bulk of the events and one {@code updateMany} ({@code $set}; through the guard with
     * idempotent multi-document retries, so that a retry is a new copy behind the overlap gate) while the fault holds.
     *
     * @param gateCurrentOps      {@code currentOp} commands the instance's guard sent through mongos (the gate)
     * @param gateKillSessions    {@code killSessions} commands it sent (the gate, for a copy still running)
     * @param gateShardRequests   shard primaries mongos asked for those {@code currentOp}s (its fan-out)
     * @param catalogCommands     commands to the config servers ({@code config.*}, {@code hello}, {@code listCollections})
     * @param guardUnknownAfter   writes of the bulk still UNKNOWN after one settle once the fault healed
     * @param guardRefused        {@code updateMany}s the guard ended without a second copy (still running or blind)
     * @param driverFailedCalls   the raw driver's calls (of 2) that threw
     */
    record FaultPhase(
            String phase,
            double guardSeconds,
            double guardCommands,
            double guardUnknown,
            double guardUnknownAfter,
            double guardRefused,
            double gateCurrentOps,
            double gateKillSessions,
            double gateShardRequests,
            double catalogCommands,
            double driverSeconds,
            double driverFailedCalls,
            double driverCurrentOps) {
        /** The numbers in the tables' order, from {@code guardSeconds} to {@code driverCurrentOps}. */
        double[] values() {
            return new double[] {
                guardSeconds,
                guardCommands,
                guardUnknown,
                guardUnknownAfter,
                guardRefused,
                gateCurrentOps,
                gateKillSessions,
                gateShardRequests,
                catalogCommands,
                driverSeconds,
                driverFailedCalls,
                driverCurrentOps
            };
        }

        Map<String, Object> toJson() {
            Map<String, Object> json = new LinkedHashMap<>();
            json.put("phase", phase);
            json.put("guardSeconds", Formula.round1(guardSeconds));
            json.put("guardCommands", Formula.round1(guardCommands));
            json.put("guardUnknown", Formula.round1(guardUnknown));
            json.put("guardUnknownAfterSettle", Formula.round1(guardUnknownAfter));
            json.put("guardUpdateManyRefused", Formula.round1(guardRefused));
            json.put("gateCurrentOps", Formula.round1(gateCurrentOps));
            json.put("gateKillSessions", Formula.round1(gateKillSessions));
            json.put("gateShardRequests", Formula.round1(gateShardRequests));
            json.put("catalogCommands", Formula.round1(catalogCommands));
            json.put("driverSeconds", Formula.round1(driverSeconds));
            json.put("driverFailedCalls", Formula.round1(driverFailedCalls));
            json.put("driverCurrentOps", Formula.round1(driverCurrentOps));
            return json;
        }
    }

    record Result(List<Point> points) {
        Map<String, Object> toJson() {
            Map<String, Object> json = new LinkedHashMap<>();
            json.put("events", EVENTS);
            json.put("keys", KEYS);
            json.put("minutes", MINUTES);
            List<Object> rows = new ArrayList<>();
            points.forEach(p -> rows.add(p.toJson()));
            json.put("points", rows);
            return json;
        }

        void print(PrintStream out) {
            out.printf(
                    "%nscale: per application instance, what it sends through mongos to the config servers (commands /"
                            + " documents / KiB), per ordered bulk of %,d events over %d keys, and heap%n",
                    EVENTS, KEYS);
            out.printf(
                    "%6s %8s %4s %6s %22s %18s %18s %7s %9s %14s %14s %7s %10s %10s %8s%n",
                    "shards",
                    "chunks",
                    "N",
                    "mongos",
                    "first read",
                    "quiet minute",
                    "after migration",
                    "rounds",
                    "commands",
                    "guard batches",
                    "driver batches",
                    "gate",
                    "heap guard",
                    "heap drv",
                    "B/chunk");
            for (Point p : points) {
                out.printf(
                        "%6d %8d %4d %6d %22s %18s %18s %7.1f %9.1f %14.1f %14.1f %7d %9dK %9dK %8.0f%n",
                        p.shards(),
                        p.chunks(),
                        p.instances(),
                        p.mongos(),
                        load(p.firstRead()),
                        load(p.quietMinute()),
                        load(p.migrationMinute()),
                        p.guardRounds(),
                        p.guardCommands(),
                        p.guardChildBatches(),
                        p.driverChildBatches(),
                        p.gateFanOut(),
                        p.guardHeapPerInstance() / 1024,
                        p.driverHeapPerInstance() / 1024,
                        p.catalogBytesPerChunk());
            }
            out.printf(
                    "%nscale, faults: per instance, N guarded instances at once, then N raw driver clients, each one"
                            + " ORDERED bulk of %,d events and one updateMany while the fault holds%n",
                    EVENTS);
            out.printf(
                    "%6s %8s %-14s %8s %9s %8s %9s %8s %9s %9s %10s %8s %9s %9s %9s%n",
                    "shards",
                    "chunks",
                    "phase",
                    "guard s",
                    "commands",
                    "unknown",
                    "unk.after",
                    "refused",
                    "currentOp",
                    "killSess",
                    "shard reqs",
                    "catalog",
                    "driver s",
                    "drv fail",
                    "drv curOp");
            for (Point p : points) {
                for (FaultPhase f : p.faults()) {
                    out.printf("%6d %8d %-14s", p.shards(), p.chunks(), f.phase());
                    int[] widths = {8, 9, 8, 9, 8, 9, 9, 10, 8, 9, 9, 9};
                    double[] values = f.values();
                    for (int i = 0; i < values.length; i++) {
                        out.printf(" %" + widths[i] + ".1f", values[i]);
                    }
                    out.println();
                }
            }
            out.println("first read: once per instance and collection (before the chunks were read by version, every"
                    + " minute: up to 20,001 chunks); batches: child batches mongos sent to shards (its round"
                    + " trips) per bulk; gate: shards one overlap-gate look through mongos asks (mongos' targeting); the raw driver sends"
                    + " nothing to the config servers; faults: unknown = bulk writes UNKNOWN when the call returned,"
                    + " unk.after = after one settle once healed, refused = updateMany ended without a second copy,"
                    + " currentOp/killSess = the gate's commands, shard reqs = shard primaries mongos asked for them");
        }

        private static String load(Load load) {
            return String.format("%.0f / %.0f / %.1f", load.commands(), load.documents(), load.bytes() / 1024);
        }
    }

    private Scale() {}

    static long units(Settings settings) {
        return (long) settings.shards().size() * settings.chunks().size();
    }

    static Result run(Settings settings, Progress progress) throws InterruptedException {
        List<Point> points = new ArrayList<>();
        for (int shards : settings.shards()) {
            for (int chunks : settings.chunks()) {
                progress.phase("scale: %d shards, %,d chunks, %d instances", shards, chunks, settings.instances());
                points.add(point(shards, chunks, settings.instances(), settings.mongos()));
                progress.step("scale: %d shards, %,d chunks", shards, chunks);
            }
        }
        return new Result(points);
    }

    /** Counts the commands an instance's client sends to the catalog, their documents and bytes. */
    static final class CatalogTraffic implements CommandListener {
        final AtomicLong commands = new AtomicLong();
        final AtomicLong documents = new AtomicLong();
        final AtomicLong bytes = new AtomicLong();
        private final Map<Integer, Boolean> catalogRequests = new java.util.concurrent.ConcurrentHashMap<>();

        @Override
        public void commandStarted(CommandStartedEvent event) {
            String name = event.getCommandName();
            boolean catalog =
                    event.getDatabaseName().equals("config") || name.equals("hello") || name.equals("listCollections");
            if (catalog) {
                catalogRequests.put(event.getRequestId(), true);
                commands.incrementAndGet();
                bytes.addAndGet(size(event.getCommand()));
            }
        }

        @Override
        public void commandSucceeded(CommandSucceededEvent event) {
            if (catalogRequests.remove(event.getRequestId()) != null) {
                BsonDocument reply = event.getResponse();
                bytes.addAndGet(size(reply));
                BsonDocument cursor = reply.getDocument("cursor", new BsonDocument());
                for (String batch : List.of("firstBatch", "nextBatch")) {
                    if (cursor.isArray(batch)) {
                        documents.addAndGet(cursor.getArray(batch).size());
                    }
                }
            }
        }

        long[] snapshot() {
            return new long[] {commands.get(), documents.get(), bytes.get()};
        }

        private static long size(BsonDocument document) {
            return new RawBsonDocument(document, new BsonDocumentCodec())
                    .getByteBuffer()
                    .remaining();
        }
    }

    private static Point point(int shards, int chunks, int instances, int mongos) throws InterruptedException {
        long started = System.nanoTime();
        ShardKey hashedId = ShardKey.of(new BsonDocument("_id", new BsonString("hashed")));
        String namespace = DATABASE + "." + COLLECTION;
        try (EmulatedShardedCluster cluster = EmulatedCluster.sharded()
                .shards(shards)
                .mongos(mongos)
                .nodesPerShard(3)
                .replicatingShards(true)
                .shardElectionTimeout(Duration.ofMillis(500))
                .start()) {
            cluster.shardCollection(namespace, hashedId);
            cluster.shardCollection(DATABASE + ".driver", hashedId);
            cluster.placeChunks(
                    namespace,
                    ChunkMap.hashedPresplit(hashedId, cluster.shardNames(), chunks)
                            .chunks());
            double setupSeconds = (System.nanoTime() - started) / 1e9;

            // Config-server load: each instance's catalog, its own as its own JVM's would be, on its own clock.
            List<CatalogTraffic> traffic = new ArrayList<>();
            List<MongoClient> catalogClients = new ArrayList<>();
            // one access per instance, kept as its guard's executors keep theirs: the catalog knows a client by it
            List<ClientPort> accesses = new ArrayList<>();
            List<ClusterCatalog> catalogs = new ArrayList<>();
            AtomicLong now = new AtomicLong();
            for (int i = 0; i < instances; i++) {
                CatalogTraffic counted = new CatalogTraffic();
                traffic.add(counted);
                catalogClients.add(MongoClients.create(MongoClientSettings.builder()
                        .applyConnectionString(new ConnectionString(mongosUri(cluster, i % mongos)))
                        .addCommandListener(counted)
                        .build()));
                accesses.add(ClientPort.of(catalogClients.get(i)));
                catalogs.add(ClusterCatalog.isolated(ClusterCatalog.Limits.DEFAULT, now::get));
            }
            MongoNamespace events = new MongoNamespace(namespace);
            Load firstRead = readAll(traffic, accesses, catalogs, events);
            Load quiet = new Load(0, 0, 0);
            Load migration = null;
            for (int minute = 1; minute <= MINUTES; minute++) {
                now.addAndGet(ClusterCatalog.CATALOG_TIME_TO_LIVE.toNanos());
                if (minute == 2) {
                    moveOneChunk(cluster, namespace, hashedId);
                    migration = readAll(traffic, accesses, catalogs, events);
                } else {
                    Load load = readAll(traffic, accesses, catalogs, events);
                    quiet = new Load(
                            quiet.commands() + load.commands() / (MINUTES - 1),
                            quiet.documents() + load.documents() / (MINUTES - 1),
                            quiet.bytes() + load.bytes() / (MINUTES - 1));
                }
            }
            double bytesPerChunk = catalogBytesPerChunk(catalogClients.get(0), events);
            catalogClients.forEach(MongoClient::close);

            // One gate look through mongos asks every shard's primary (mongos' $currentOp targets them all, as the
            // emulator does in process, so no shard command can be counted here): the fan-out is the shard count.
            int gateFanOut = shards;

            // Bulks and heap: N guarded instances, then N raw driver clients.
            List<WriteModel<Document>> bulk = events(EVENTS, KEYS);
            long baseline = usedHeapAfterGc();
            List<MongoClient> guardedClients = new ArrayList<>();
            List<WriteOutcome<Document>> outcomes = new ArrayList<>();
            cluster.routing().reset();
            for (int i = 0; i < instances; i++) {
                WriteGuard guard = WriteGuard.create();
                MongoClient client = MongoClients.create(guard.configure(MongoClientSettings.builder()
                                .applyConnectionString(new ConnectionString(mongosUri(cluster, i % mongos))))
                        .build());
                guardedClients.add(client);
                MongoCollection<Document> collection =
                        client.getDatabase(DATABASE).getCollection(COLLECTION);
                GuardedCollection<Document> guarded = guard.guardCollection(client, collection);
                outcomes.add(guarded.execute(bulk, new BulkWriteOptions().ordered(true)));
            }
            long guardHeap = (usedHeapAfterGc() - baseline) / instances;
            List<RoutedWrite> guardWrites = cluster.routing().writes(namespace);
            guardedClients.forEach(MongoClient::close);

            baseline = usedHeapAfterGc();
            List<MongoClient> rawClients = new ArrayList<>();
            cluster.routing().reset();
            for (int i = 0; i < instances; i++) {
                MongoClient client = MongoClients.create(mongosUri(cluster, i % mongos));
                rawClients.add(client);
                client.getDatabase(DATABASE)
                        .getCollection("driver")
                        .bulkWrite(bulk, new BulkWriteOptions().ordered(true));
            }
            long driverHeap = (usedHeapAfterGc() - baseline) / instances;
            List<RoutedWrite> driverWrites = cluster.routing().writes(DATABASE + ".driver");
            rawClients.forEach(MongoClient::close);

            List<FaultPhase> faults = new ArrayList<>();
            faults.add(stalledShard(cluster, instances, mongos, bulk));
            faults.add(failover(cluster, instances, mongos, bulk));

            return new Point(
                    shards,
                    chunks,
                    instances,
                    mongos,
                    setupSeconds,
                    firstRead,
                    quiet,
                    migration,
                    outcomes.stream().mapToInt(WriteOutcome::rounds).average().orElse(0),
                    outcomes.stream().mapToInt(WriteOutcome::commands).average().orElse(0),
                    guardWrites.stream().mapToInt(RoutedWrite::childBatches).sum() / (double) instances,
                    driverWrites.stream().mapToInt(RoutedWrite::childBatches).sum() / (double) instances,
                    gateFanOut,
                    guardHeap,
                    driverHeap,
                    bytesPerChunk,
                    faults);
        }
    }

    /** The socket timeout of the fault phases' clients: the guard's server deadline is below it. */
    static final int FAULT_SOCKET_TIMEOUT_MS = 2_000;

    /** Shard 0's primary holds every write (it answers {@code hello}, so no election) while the fleets write. */
    private static FaultPhase stalledShard(
            EmulatedShardedCluster cluster, int instances, int mongos, List<WriteModel<Document>> bulk)
            throws InterruptedException {
        StallHandle stall = cluster.shardSet(0).stallPrimaryWrites();
        FleetRun guarded;
        FleetRun raw;
        try {
            guarded = fleet(cluster, instances, mongos, bulk, true);
            raw = fleet(cluster, instances, mongos, bulk, false);
        } finally {
            stall.release();
        }
        return phase("stalled shard", cluster, instances, guarded.settleAll(), raw);
    }

    /** Shard 1's primary stopped as the fleets start; another member is elected; the old one comes back after. */
    private static FaultPhase failover(
            EmulatedShardedCluster cluster, int instances, int mongos, List<WriteModel<Document>> bulk)
            throws InterruptedException {
        ShardReplicaSet set = cluster.shardSet(1);
        EmulatedNode primary = set.awaitPrimary(Duration.ofSeconds(30));
        set.stop(primary);
        FleetRun guarded = fleet(cluster, instances, mongos, bulk, true);
        set.awaitPrimary(Duration.ofSeconds(30));
        set.start(primary);
        EmulatedNode second = set.awaitPrimary(Duration.ofSeconds(30));
        set.stop(second);
        FleetRun raw = fleet(cluster, instances, mongos, bulk, false);
        set.awaitPrimary(Duration.ofSeconds(30));
        set.start(second);
        set.awaitPrimary(Duration.ofSeconds(30));
        return phase("failover", cluster, instances, guarded.settleAll(), raw);
    }

    private static FaultPhase phase(String name, EmulatedShardedCluster cluster, int n, FleetRun g, FleetRun raw) {
        return new FaultPhase(
                name,
                g.seconds,
                g.commands.get() / (double) n,
                g.unknown.get() / (double) n,
                g.unknownAfter.get() / (double) n,
                g.refused.get() / (double) n,
                g.traffic.currentOps.get() / (double) n,
                g.traffic.killSessions.get() / (double) n,
                g.shardRequests / (double) n,
                g.traffic.catalog.get() / (double) n,
                raw.seconds,
                raw.failed.get() / (double) n,
                raw.traffic.currentOps.get() / (double) n);
    }

    /** What one fleet did in a fault phase, summed over its instances. */
    static final class FleetRun {
        final GateTraffic traffic = new GateTraffic();
        final AtomicLong commands = new AtomicLong();
        final AtomicLong unknown = new AtomicLong();
        final AtomicLong unknownAfter = new AtomicLong();
        final AtomicLong refused = new AtomicLong();
        final AtomicLong failed = new AtomicLong();
        final List<Runnable> afterHeal = java.util.Collections.synchronizedList(new ArrayList<>());
        final List<MongoClient> clients = java.util.Collections.synchronizedList(new ArrayList<>());
        double seconds;
        long shardRequests;

        /** Settles each UNKNOWN bulk once (the fault has healed), then closes the clients. */
        FleetRun settleAll() {
            afterHeal.forEach(Runnable::run);
            clients.forEach(MongoClient::close);
            return this;
        }
    }

    /** Counts the overlap gate's commands and the catalog's, as an application's own command listener sees them. */
    static final class GateTraffic implements CommandListener {
        final AtomicLong currentOps = new AtomicLong();
        final AtomicLong killSessions = new AtomicLong();
        final AtomicLong catalog = new AtomicLong();

        @Override
        public void commandStarted(CommandStartedEvent event) {
            String name = event.getCommandName();
            boolean currentOpStage = name.equals("aggregate")
                    && event.getCommand().isArray("pipeline")
                    && !event.getCommand().getArray("pipeline").isEmpty()
                    && event.getCommand()
                            .getArray("pipeline")
                            .get(0)
                            .asDocument()
                            .containsKey("$currentOp");
            if (name.equals("currentOp") || currentOpStage) {
                currentOps.incrementAndGet();
            } else if (name.equals("killSessions")) {
                killSessions.incrementAndGet();
            } else if (event.getDatabaseName().equals("config")
                    || name.equals("hello")
                    || name.equals("listCollections")) {
                catalog.incrementAndGet();
            }
        }
    }

    /**
     * N instances at once, each its own client (and guard), one ORDERED bulk of the events and one {@code updateMany};
     * returns when every instance's calls returned.
     */
    private static FleetRun fleet(
            EmulatedShardedCluster cluster, int instances, int mongos, List<WriteModel<Document>> bulk, boolean guard)
            throws InterruptedException {
        FleetRun run = new FleetRun();
        long shardRequestsBefore = cluster.routing().currentOpShardRequests();
        long started = System.nanoTime();
        List<Thread> threads = new ArrayList<>();
        for (int i = 0; i < instances; i++) {
            String uri = mongosUri(cluster, i % mongos);
            Thread thread = new Thread(() -> instanceUnderFault(uri, bulk, guard, run), "scale-fault-" + i);
            threads.add(thread);
            thread.start();
        }
        for (Thread thread : threads) {
            thread.join(TimeUnit.MINUTES.toMillis(5));
        }
        run.seconds = (System.nanoTime() - started) / 1e9;
        run.shardRequests = cluster.routing().currentOpShardRequests() - shardRequestsBefore;
        return run;
    }

    private static void instanceUnderFault(String uri, List<WriteModel<Document>> bulk, boolean guard, FleetRun run) {
        MongoClientSettings.Builder builder = MongoClientSettings.builder()
                .applyConnectionString(new ConnectionString(uri))
                .addCommandListener(run.traffic)
                .applyToSocketSettings(s -> s.readTimeout(FAULT_SOCKET_TIMEOUT_MS, TimeUnit.MILLISECONDS))
                .applyToClusterSettings(s -> s.serverSelectionTimeout(30, TimeUnit.SECONDS));
        WriteGuard writeGuard = WriteGuard.create();
        if (guard) {
            writeGuard.configure(builder);
        }
        MongoClient client = MongoClients.create(builder.build());
        run.clients.add(client);
        MongoCollection<Document> collection =
                client.getDatabase(DATABASE).getCollection(guard ? COLLECTION : "driver");
        if (!guard) {
            try {
                collection.bulkWrite(bulk, new BulkWriteOptions().ordered(true));
            } catch (RuntimeException e) {
                run.failed.incrementAndGet();
            }
            try {
                collection.updateMany(new Document(), Updates.set("touched", true));
            } catch (RuntimeException e) {
                run.failed.incrementAndGet();
            }
            return;
        }
        GuardedCollection<Document> guarded = writeGuard.guardCollection(client, collection);
        WriteOutcome<Document> outcome = guarded.execute(bulk, new BulkWriteOptions().ordered(true));
        run.commands.addAndGet(outcome.commands());
        int unknown = outcome.counts().getOrDefault(WriteStatus.UNKNOWN, 0);
        run.unknown.addAndGet(unknown);
        run.afterHeal.add(() -> {
            WriteOutcome<Document> settled = outcome.hasUnknown() ? writeGuard.settle(outcome) : outcome;
            run.unknownAfter.addAndGet(settled.counts().getOrDefault(WriteStatus.UNKNOWN, 0));
        });
        try {
            guarded.withIdempotentMultiDocumentRetries().updateMany(new Document(), Updates.set("touched", true));
        } catch (RuntimeException e) {
            run.refused.incrementAndGet();
        }
    }

    /** Every instance's catalog asked for the placement once; what the config servers received, per instance. */
    private static Load readAll(
            List<CatalogTraffic> traffic,
            List<ClientPort> clients,
            List<ClusterCatalog> catalogs,
            MongoNamespace namespace) {
        long[] before = total(traffic);
        for (int i = 0; i < clients.size(); i++) {
            catalogs.get(i).placement(clients.get(i), namespace, 30_000);
        }
        long[] after = total(traffic);
        int n = clients.size();
        return new Load(
                (after[0] - before[0]) / (double) n,
                (after[1] - before[1]) / (double) n,
                (after[2] - before[2]) / (double) n);
    }

    private static long[] total(List<CatalogTraffic> traffic) {
        long[] sum = new long[3];
        for (CatalogTraffic t : traffic) {
            long[] s = t.snapshot();
            for (int i = 0; i < 3; i++) {
                sum[i] += s[i];
            }
        }
        return sum;
    }

    /** Moves the chunk of {@code _id} 0 to another shard (one migration, as the balancer makes them). */
    private static void moveOneChunk(EmulatedShardedCluster cluster, String namespace, ShardKey key) {
        BsonDocument document = new BsonDocument("_id", new BsonInt32(0));
        String from = cluster.chunkMap(namespace).shardOf(key.pointOf(document));
        String to = cluster.shardNames().stream()
                .filter(s -> !s.equals(from))
                .findFirst()
                .orElseThrow();
        cluster.moveChunk(namespace, document, to);
    }

    /** The heap one catalog keeps per chunk: used heap after a full GC with and without one holding the chunks. */
    private static double catalogBytesPerChunk(MongoClient client, MongoNamespace namespace) {
        ClusterCatalog catalog = ClusterCatalog.isolated(ClusterCatalog.Limits.DEFAULT, System::nanoTime);
        ClientPort access = ClientPort.of(client);
        catalog.topology(access, 30_000);
        catalog.shardedCollection(access, namespace, 30_000);
        long before = usedHeapAfterGc();
        catalog.placement(access, namespace, 30_000);
        long after = usedHeapAfterGc();
        long held = Math.max(1, catalog.chunksHeld());
        return Math.max(0, after - before) / (double) held;
    }

    private static String mongosUri(EmulatedShardedCluster cluster, int i) {
        return "mongodb://" + cluster.mongos(i).address();
    }

    /** {@code count} replacement events over {@code keys} keys, interleaved. */
    static List<WriteModel<Document>> events(int count, int keys) {
        List<WriteModel<Document>> models = new ArrayList<>();
        for (int i = 0; i < count; i++) {
            int key = i % keys;
            models.add(new ReplaceOneModel<>(
                    new Document("_id", key),
                    new Document("_id", key).append("seq", i).append("payload", "event " + i),
                    new ReplaceOptions().upsert(true)));
        }
        return models;
    }

    private static long usedHeapAfterGc() {
        for (int i = 0; i < 3; i++) {
            System.gc();
            try {
                Thread.sleep(50);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }
        return ManagementFactory.getMemoryMXBean().getHeapMemoryUsage().getUsed();
    }
}
