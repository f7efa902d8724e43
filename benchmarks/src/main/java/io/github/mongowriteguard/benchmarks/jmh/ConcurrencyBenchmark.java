package io.github.mongowriteguard.benchmarks.jmh;

import com.mongodb.bulk.BulkWriteResult;
import com.mongodb.client.model.BulkWriteOptions;
import com.mongodb.client.model.WriteModel;
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
 * Many threads sharing one client (and, on the guard's path, one guard) on the cost-free server: throughput of
 * {@code bulkWrite} of {@code docs} {@code ReplaceOne} upserts, unordered. The thread count is JMH's {@code -t}:
 *
 * <pre>
 * java -jar benchmarks/target/lab.jar jmh ConcurrencyBenchmark -t 64
 * java -jar benchmarks/target/lab.jar perf          # runs it at 1, 8, 32 and 64 threads
 * </pre>
 *
 * <p>Every thread sends the same models: the server stores nothing, so that costs nothing, and the guard's plan of one
 * call never sees another call's writes.
 */
@State(Scope.Benchmark)
@BenchmarkMode(Mode.Throughput)
@OutputTimeUnit(TimeUnit.SECONDS)
@Warmup(iterations = 3, time = 2)
@Measurement(iterations = 5, time = 2)
@Fork(
        value = 1,
        jvmArgsAppend = {"-Xms4g", "-Xmx4g", "-XX:+AlwaysPreTouch"})
public class ConcurrencyBenchmark {

    @Param({"100"})
    public int docs;

    @Param({"driver", "guard"})
    public String path;

    private CostFreeClients clients;
    private List<WriteModel<Document>> models;
    private final BulkWriteOptions options = new BulkWriteOptions().ordered(false);

    @Setup(Level.Trial)
    public void start() {
        clients = CostFreeClients.start(path);
        models = CostFreeBenchmark.models("replace-upsert", docs);
    }

    /** The emulator keeps a record per command it received; forgotten between iterations, so they do not pile up. */
    @Setup(Level.Iteration)
    public void forgetRecords() {
        clients.cluster().truth().reset();
    }

    @TearDown(Level.Trial)
    public void stop() {
        clients.close();
    }

    @Benchmark
    public BulkWriteResult bulkWrite() {
        return clients.bulkWrite(models, options);
    }
}
