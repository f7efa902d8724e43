package io.github.mongowriteguard.benchmarks.jmh;

import com.mongodb.bulk.BulkWriteResult;
import com.mongodb.client.model.BulkWriteOptions;
import com.mongodb.client.model.Filters;
import com.mongodb.client.model.InsertOneModel;
import com.mongodb.client.model.ReplaceOneModel;
import com.mongodb.client.model.ReplaceOptions;
import com.mongodb.client.model.WriteModel;
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
 * The guard against the driver on a server that costs nothing ({@link io.github.mongowriteguard.testkit.server.Storage#NONE}:
 * the emulator's wire front end and sessions, no storage engine), so what differs is the client: planning, encoding,
 * decoding and the guard's bookkeeping. {@code bulkWrite} of 1 to 100,000 {@code ReplaceOne} upserts ({@code
 * Filters.eq("_id", {productId, storeId})}) or inserts, ordered or not; {@code path} puts the driver's and the guard's
 * runs of one case back to back. With {@code -prof gc}, {@code gc.alloc.rate.norm} divided by {@code docs} is the
 * allocation per write (the emulator's share, the same for both paths, included).
 *
 * <pre>
 * java -jar benchmarks/target/lab.jar jmh CostFreeBenchmark -prof gc
 * java -jar benchmarks/target/lab.jar perf       # the issue-18 table from short runs of this and the others
 * </pre>
 */
@State(Scope.Benchmark)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.MILLISECONDS)
@Warmup(iterations = 3, time = 2)
@Measurement(iterations = 5, time = 2)
@Fork(
        value = 1,
        jvmArgsAppend = {"-Xms4g", "-Xmx4g", "-XX:+AlwaysPreTouch"})
public class CostFreeBenchmark {

    @Param({"1", "100", "1000", "10000", "100000"})
    public int docs;

    /** {@code replace-upsert} or {@code insert}. */
    @Param({"replace-upsert", "insert"})
    public String kind;

    @Param({"true", "false"})
    public boolean ordered;

    @Param({"driver", "guard"})
    public String path;

    private CostFreeClients clients;
    private List<WriteModel<Document>> models;
    private BulkWriteOptions options;

    @Setup(Level.Trial)
    public void start() {
        clients = CostFreeClients.start(path);
        models = models(kind, docs);
        options = new BulkWriteOptions().ordered(ordered);
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

    /**
     * {@code n} writes of one kind, each with its {@code _id} given (so neither the driver nor the guard adds one, and
     * a model list can be sent again and again).
     *
     * @param kind {@code replace-upsert} or {@code insert}
     * @param n    how many
     * @return the models
     */
    public static List<WriteModel<Document>> models(String kind, int n) {
        List<WriteModel<Document>> models = new ArrayList<>(n);
        for (int i = 0; i < n; i++) {
            Document id = new Document("productId", i).append("storeId", i % 50);
            Document document = new Document("_id", id).append("quantity", i);
            models.add(
                    switch (kind) {
                        case "replace-upsert" ->
                            new ReplaceOneModel<>(Filters.eq("_id", id), document, new ReplaceOptions().upsert(true));
                        case "insert" -> new InsertOneModel<>(document);
                        default ->
                            throw new IllegalArgumentException("kind (" + kind + ") must be replace-upsert or insert");
                    });
        }
        return models;
    }
}
