package io.github.mongowriteguard.benchmarks.jmh;

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
import io.github.mongowriteguard.testkit.EmulatedReplicaSet;
import io.github.mongowriteguard.testkit.server.Storage;
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
import reactor.core.publisher.Mono;

/**
 * The reactive guard's cost per call against the reactive driver: one {@code bulkWrite} of UNORDERED upserts by
 * {@code _id} (the lab's {@code reactive} rows), each invocation a new call (a new publisher, as an application makes
 * one per bulk: the driver builds its operation when the method is called), subscribed and awaited, on the cost-free
 * emulated replica set ({@link Storage#NONE}), so the difference is the guard's path: planning, its session, encoding,
 * the send and the outcome, and the threads each reply is finished on.
 *
 * <pre>
 * java -jar benchmarks/target/lab.jar jmh ReactiveOverheadBenchmark
 * </pre>
 */
@State(Scope.Benchmark)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.MICROSECONDS)
@Warmup(iterations = 5, time = 2)
@Measurement(iterations = 10, time = 2)
@Fork(
        value = 1,
        jvmArgsAppend = {"-Xms2g", "-Xmx2g", "-XX:+AlwaysPreTouch"})
public class ReactiveOverheadBenchmark {

    @Param({"1", "100"})
    public int writes;

    @Param({"reactive-driver", "reactive-guard"})
    public String path;

    private EmulatedReplicaSet cluster;
    private MongoClient client;
    private MongoCollection<Document> driver;
    private GuardedReactiveCollection<Document> guard;
    private List<WriteModel<Document>> models;
    private final BulkWriteOptions unordered = new BulkWriteOptions().ordered(false);

    @Setup(Level.Trial)
    public void start() {
        cluster = EmulatedCluster.replicaSet().storage(Storage.NONE).start();
        WriteGuard writeGuard = WriteGuard.create();
        MongoClientSettings.Builder settings =
                MongoClientSettings.builder().applyConnectionString(new ConnectionString(cluster.connectionString()));
        client = MongoClients.create(
                path.equals("reactive-guard") ? writeGuard.configure(settings).build() : settings.build());
        driver = client.getDatabase("jmh").getCollection("reactive");
        guard = path.equals("reactive-guard") ? GuardedReactiveCollection.of(writeGuard, client, driver) : null;
        models = new ArrayList<>(writes);
        UpdateOptions upsert = new UpdateOptions().upsert(true);
        for (int i = 0; i < writes; i++) {
            models.add(new UpdateOneModel<>(Filters.eq("_id", i), Updates.set("v", i), upsert));
        }
    }

    @TearDown(Level.Trial)
    public void stop() {
        client.close();
        cluster.close();
    }

    @Benchmark
    public BulkWriteResult bulkWrite() {
        return Mono.from(guard != null ? guard.bulkWrite(models, unordered) : driver.bulkWrite(models, unordered))
                .block();
    }
}
