package io.github.mongowriteguard.benchmarks.jmh;

import com.mongodb.ConnectionString;
import com.mongodb.MongoClientSettings;
import com.mongodb.bulk.BulkWriteResult;
import com.mongodb.client.MongoClient;
import com.mongodb.client.MongoClients;
import com.mongodb.client.MongoCollection;
import com.mongodb.client.model.BulkWriteOptions;
import com.mongodb.client.model.Filters;
import com.mongodb.client.model.ReplaceOneModel;
import com.mongodb.client.model.ReplaceOptions;
import com.mongodb.client.model.WriteModel;
import io.github.mongowriteguard.GuardedCollection;
import io.github.mongowriteguard.WriteGuard;
import io.github.mongowriteguard.testkit.EmulatedCluster;
import io.github.mongowriteguard.testkit.EmulatedReplicaSet;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.bson.Document;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;
import org.openjdk.jmh.annotations.Warmup;

/**
 * The guard's cost against the raw driver: the same bulk of {@code ReplaceOne} upserts (idempotent, so every
 * invocation writes the same state) on the in-process emulated replica set, through {@code bulkWrite} of each.
 * Both pay the emulator's engine; the difference is planning, encoding and the guard's command path.
 *
 * <pre>
 * java -jar benchmarks/target/lab.jar jmh GuardOverheadBenchmark
 * </pre>
 *
 * <p>The fork runs on a fixed, pre-touched heap, as {@link PlanBenchmark} does.
 */
@State(Scope.Benchmark)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.MILLISECONDS)
@Warmup(iterations = 5, time = 3)
@Measurement(iterations = 5, time = 2)
@Fork(
        value = 1,
        jvmArgsAppend = {"-Xms4g", "-Xmx4g", "-XX:+AlwaysPreTouch"})
public class GuardOverheadBenchmark {

    @Param({"1", "100", "1000", "10000"})
    public int docs;

    /** The client; JMH runs both for one size before the next size, so each pair is measured minutes apart at most. */
    @Param({"raw-driver", "guarded"})
    public String path;

    private EmulatedReplicaSet cluster;
    private MongoClient rawClient;
    private MongoClient guardedClient;
    private MongoCollection<Document> raw;
    private GuardedCollection<Document> guarded;
    private List<WriteModel<Document>> models;

    @Setup(Level.Trial)
    public void start() {
        cluster = EmulatedCluster.replicaSet().start();
        rawClient = MongoClients.create(MongoClientSettings.builder()
                .applyConnectionString(new ConnectionString(cluster.connectionString()))
                .build());
        WriteGuard guard = WriteGuard.create();
        guardedClient = MongoClients.create(guard.configure(MongoClientSettings.builder()
                        .applyConnectionString(new ConnectionString(cluster.connectionString())))
                .build());
        raw = rawClient.getDatabase("jmh").getCollection("raw");
        guarded = guard.guardCollection(
                guardedClient, guardedClient.getDatabase("jmh").getCollection("guarded"));
        models = upserts(docs);
    }

    @TearDown(Level.Trial)
    public void stop() {
        guardedClient.close();
        rawClient.close();
        cluster.close();
    }

    @Benchmark
    public BulkWriteResult bulkWrite() {
        return path.equals("guarded")
                ? guarded.bulkWrite(models, new BulkWriteOptions())
                : raw.bulkWrite(models, new BulkWriteOptions());
    }

    static List<WriteModel<Document>> upserts(int n) {
        List<WriteModel<Document>> models = new ArrayList<>(n);
        for (int i = 0; i < n; i++) {
            Document id = new Document("productId", i).append("storeId", i % 50);
            models.add(new ReplaceOneModel<>(
                    Filters.eq("_id", id),
                    new Document("_id", id).append("quantity", i),
                    new ReplaceOptions().upsert(true)));
        }
        return models;
    }
}
