package io.github.mongowriteguard.benchmarks.lab;

import com.mongodb.ConnectionString;
import com.mongodb.MongoClientSettings;
import com.mongodb.MongoCommandException;
import com.mongodb.MongoException;
import com.mongodb.ReadPreference;
import com.mongodb.Tag;
import com.mongodb.TagSet;
import com.mongodb.client.MongoClient;
import com.mongodb.client.MongoClients;
import com.mongodb.client.MongoCollection;
import com.mongodb.client.model.InsertManyOptions;
import io.github.mongowriteguard.read.GuardedReads;
import io.github.mongowriteguard.read.ReadGuardOptions;
import io.github.mongowriteguard.read.ReadResult;
import io.github.mongowriteguard.testkit.EmulatedCluster;
import io.github.mongowriteguard.testkit.EmulatedShardedCluster;
import io.github.mongowriteguard.testkit.node.EmulatedNode;
import io.github.mongowriteguard.testkit.sharding.ChunkMigration;
import io.github.mongowriteguard.testkit.sharding.ShardReplicaSet;
import io.github.mongowriteguard.testkit.stall.StallHandle;
import java.io.PrintStream;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.function.Supplier;
import org.bson.BsonDocument;
import org.bson.Document;

/**
 * Seed part 6's procedure (write-path.md, section 3) on the emulated cluster, with time scaled down: 2 shards of
 * 3 nodes, {@code demo.store_inventory} hashed on {@code _id} with 2,000 documents, shard A's secondaries tagged
 * a1/a2, a1 restarted, shard A's primary alive with its writes stalled. It prints what a read aimed at a1 and at a2
 * sees while the primary is stalled and after it resumes, and what the guarded degraded read on a1 answers while
 * a migration has left orphans.
 *
 * <pre>
 * java -jar benchmarks/target/lab.jar stale-reads [--json] [--refresh-limit-ms 1500] [--max-time-ms 3000]
 * java -jar benchmarks/target/lab.jar                   # the full run includes it
 * </pre>
 */
final class StaleReads {
    private static final String NS = "demo.store_inventory";

    private StaleReads() {}

    /** One line of the table. */
    record Row(String step, String node, String outcome, long millis, String detail) {}

    /** The table, or a note saying why the scenario was skipped (no rows). */
    record Result(long refreshLimitMs, long maxTimeMs, List<Row> rows, String note) {
        Map<String, Object> toJson() {
            Map<String, Object> json = new LinkedHashMap<>();
            json.put("scenario", "stale-reads");
            json.put("refreshLimitMs", refreshLimitMs);
            json.put("maxTimeMs", maxTimeMs);
            List<Object> list = new ArrayList<>();
            for (Row row : rows) {
                Map<String, Object> r = new LinkedHashMap<>();
                r.put("step", row.step());
                r.put("node", row.node());
                r.put("outcome", row.outcome());
                r.put("ms", row.millis());
                r.put("detail", row.detail());
                list.add(r);
            }
            json.put("rows", list);
            if (note != null) {
                json.put("note", note);
            }
            return json;
        }

        void print(PrintStream out) {
            out.printf(
                    "%nstale-reads: seed part 6 on 2 shards x 3 nodes, 2,000 documents; refresh limit %d ms (30 s scaled),"
                            + " client maxTimeMS %d ms%n",
                    refreshLimitMs, maxTimeMs);
            out.printf("%-24s %-52s %-44s %7s  %s%n", "step", "read aimed at", "outcome", "ms", "detail");
            for (Row row : rows) {
                out.printf(
                        "%-24s %-52s %-44s %7d  %s%n",
                        row.step(), row.node(), row.outcome(), row.millis(), row.detail());
            }
            if (note != null) {
                out.println("note: " + note);
            }
        }
    }

    /** The cluster's setup and the five reads, for the progress bar. */
    static long units(Options.Config config) {
        return config.uri() != null ? 0 : 6;
    }

    /**
     * Runs the procedure.
     *
     * @param config {@code --refresh-limit-ms} (the secondary's 30 s refresh limit, scaled) and {@code --max-time-ms}
     *               (the seed's maxTimeMS 60000, scaled); with {@code --uri} the scenario is skipped: it needs the
     *               emulator's stalls, restarts and migrations
     */
    static Result run(Options.Config config, Progress progress) {
        long refreshLimitMs = config.staleReads().refreshLimitMs;
        long maxTimeMs = config.staleReads().maxTimeMs;
        if (config.uri() != null) {
            return new Result(
                    refreshLimitMs,
                    maxTimeMs,
                    List.of(),
                    "skipped on a real deployment: the scenario stalls a"
                            + " shard primary's writes, restarts a secondary and leaves a migration's orphans, which only the emulator does");
        }
        progress.phase(
                "stale-reads: 2 shards x 3 nodes, 2,000 documents, a migration leaving orphans, secondary a1 restarted");
        List<Row> rows = new ArrayList<>();
        try (EmulatedShardedCluster cluster = EmulatedCluster.sharded()
                        .shards(2)
                        .nodesPerShard(3)
                        .routingRefreshLimit(Duration.ofMillis(refreshLimitMs))
                        .start();
                MongoClient client = MongoClients.create(MongoClientSettings.builder()
                        .applyConnectionString(new ConnectionString(cluster.connectionString()))
                        .applyToSocketSettings(s ->
                                s.readTimeout((int) Math.min(Integer.MAX_VALUE, maxTimeMs * 3), TimeUnit.MILLISECONDS))
                        .build())) {
            client.getDatabase("admin")
                    .runCommand(new Document("shardCollection", NS).append("key", new Document("_id", "hashed")));
            MongoCollection<Document> inventory = client.getDatabase("demo").getCollection("store_inventory");
            List<Document> documents = new ArrayList<>();
            for (int p = 1; p <= 100; p++) {
                for (int s = 1; s <= 20; s++) {
                    documents.add(
                            new Document("_id", new Document("productId", p).append("storeId", s)).append("qty", 10));
                }
            }
            inventory.insertMany(documents, new InsertManyOptions().ordered(false));
            ShardReplicaSet shardA = cluster.shardSet(0);
            EmulatedNode a1 = shardA.secondary(0);
            EmulatedNode a2 = shardA.secondary(1);
            a1.tags(Map.of("node", "a1"));
            a2.tags(Map.of("node", "a2"));
            Document target = documents.stream()
                    .filter(d -> cluster.chunkMap(NS)
                            .shardOfDocument(BsonDocument.parse(d.toJson()))
                            .equals(shardA.name()))
                    .findFirst()
                    .orElseThrow();
            Supplier<Document> onA1 = () -> aimed(inventory, "a1")
                    .find(new Document("_id", target.get("_id")))
                    .maxTime(maxTimeMs, TimeUnit.MILLISECONDS)
                    .first();
            Supplier<Document> onA2 = () -> aimed(inventory, "a2")
                    .find(new Document("_id", target.get("_id")))
                    .maxTime(maxTimeMs, TimeUnit.MILLISECONDS)
                    .first();

            // A migration off shard A whose delete phase has not run: its documents stay on shard A as orphans.
            Document moved = documents.stream()
                    .filter(d -> cluster.chunkMap(NS)
                                    .shardOfDocument(BsonDocument.parse(d.toJson()))
                                    .equals(shardA.name())
                            && !chunkOf(cluster, d).equals(chunkOf(cluster, target)))
                    .findFirst()
                    .orElseThrow();
            ChunkMigration migration = cluster.moveChunk(NS, BsonDocument.parse(moved.toJson()), "shard01");
            // Both secondaries have served reads of the collection; then a1 is restarted "to see if it helps".
            onA1.get();
            onA2.get();
            shardA.restart(a1);
            progress.step("stale-reads: cluster ready, a1 restarted");
            long a1Stale = shardA.staleConfigReplies(a1);
            long a2Stale = shardA.staleConfigReplies(a2);
            long retries = cluster.routing().staleConfigRetries();
            progress.phase(
                    "stale-reads: reads on a1 and a2 while shard A's primary cannot write, then after it resumes");
            try (StallHandle stalled = shardA.stallPrimaryWrites()) {
                rows.add(read(
                        "primary writes stalled",
                        "a1 (restarted)",
                        onA1,
                        () -> "a1 rejected " + (shardA.staleConfigReplies(a1) - a1Stale)
                                + " reads as stale (metadata UNKNOWN), mongos retried StaleConfig "
                                + (cluster.routing().staleConfigRetries() - retries) + " times; a1 logged "
                                + shardA.refreshLog(a1).size() + " refresh failure(s)"));
                progress.step("stale-reads: read on a1, primary stalled");
                rows.add(read(
                        "primary writes stalled",
                        "a2 (not restarted)",
                        onA2,
                        () -> "a2 rejected " + (shardA.staleConfigReplies(a2) - a2Stale) + " reads as stale"));
                progress.step("stale-reads: read on a2, primary stalled");
                GuardedReads<Document> guarded = GuardedReads.wrap(
                        inventory.withReadPreference(
                                ReadPreference.secondary(List.of(new TagSet(new Tag("node", "a1")), new TagSet()))),
                        ReadGuardOptions.builder()
                                .degradedReads(true)
                                .normalReadTimeout(Duration.ofMillis(maxTimeMs))
                                .build());
                long start = System.nanoTime();
                ReadResult<Document> screen = guarded.find(new Document());
                long millis = elapsed(start);
                long distinct = screen.documents().stream()
                        .map(d -> d.get("_id"))
                        .distinct()
                        .count();
                rows.add(new Row(
                        "primary writes stalled",
                        "a1, guarded degraded read of the whole collection",
                        screen.isApproximate() ? "approximate" : "exact",
                        millis,
                        screen.size() + " documents, " + distinct
                                + " distinct _id, "
                                + screen.approximation()
                                        .map(a -> a.duplicatesRemoved())
                                        .orElse(0)
                                + " orphan duplicates removed ("
                                + migration.movedIds().size() + " orphans on " + migration.from() + ")"));
                progress.step("stale-reads: guarded degraded read, primary stalled");
                stalled.release();
                rows.add(read(
                        "primary resumed",
                        "a1 (restarted)",
                        onA1,
                        () -> "a1 holds routing version "
                                + shardA.routingVersion(a1, NS).orElse(-1)));
                progress.step("stale-reads: read on a1, primary resumed");
                rows.add(read("primary resumed", "a2 (not restarted)", onA2, () -> ""));
                progress.step("stale-reads: read on a2, primary resumed");
            }
        }
        return new Result(refreshLimitMs, maxTimeMs, rows, null);
    }

    private static io.github.mongowriteguard.testkit.sharding.Chunk chunkOf(
            EmulatedShardedCluster cluster, Document document) {
        var map = cluster.chunkMap(NS);
        BsonDocument point = map.key().pointOf(BsonDocument.parse(document.toJson()));
        return map.chunks().stream().filter(c -> c.contains(point)).findFirst().orElseThrow();
    }

    private static MongoCollection<Document> aimed(MongoCollection<Document> collection, String node) {
        return collection.withReadPreference(ReadPreference.secondary(new TagSet(new Tag("node", node))));
    }

    private static Row read(String step, String node, Supplier<Document> read, Supplier<String> detail) {
        long start = System.nanoTime();
        String outcome;
        try {
            outcome = read.get() != null ? "answered" : "answered (no document)";
        } catch (MongoCommandException e) {
            outcome = "failed: " + e.getErrorCodeName() + " (" + e.getErrorCode() + ")";
        } catch (MongoException e) {
            outcome = "failed: " + e.getClass().getSimpleName() + " (" + e.getCode() + ")";
        }
        return new Row(step, node, outcome, elapsed(start), detail.get());
    }

    private static long elapsed(long startNanos) {
        return TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - startNanos);
    }
}
