package io.github.mongowriteguard.benchmarks.jmh;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

import org.bson.Document;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.Warmup;

import com.mongodb.MongoClientSettings;
import com.mongodb.client.model.Filters;
import com.mongodb.client.model.ReplaceOneModel;
import com.mongodb.client.model.ReplaceOptions;
import com.mongodb.client.model.UpdateOneModel;
import com.mongodb.client.model.Updates;
import com.mongodb.client.model.WriteModel;

import io.github.mongowriteguard.bulk.BulkPlan;
import io.github.mongowriteguard.bulk.BulkPlanner;
import io.github.mongowriteguard.bulk.PlanOptions;

/**
 * Planning and de-duplication alone ({@link BulkPlanner#plan}), no server: 100,000 ordered writes, a replacement
 * and an update per key over 80,000 keys, so a fifth of the keys are written twice and get superseded or a second
 * round.
 *
 * <pre>
 * java -jar benchmarks/target/lab.jar jmh PlanBenchmark -f 1 -wi 2 -i 3
 * </pre>
 */
@State(Scope.Benchmark)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.MILLISECONDS)
@Warmup(iterations = 5, time = 3)
@Measurement(iterations = 5, time = 2)
@Fork(1)
public class PlanBenchmark {

    @Param({"100000"})
    public int writes;

    private BulkPlanner<Document> planner;
    private List<WriteModel<Document>> models;

    @Setup
    public void prepare() {
        planner = BulkPlanner.of(Document.class, MongoClientSettings.getDefaultCodecRegistry());
        int keys = writes * 4 / 5;
        models = new ArrayList<>(writes);
        for (int i = 0; i < writes; i++) {
            int key = i < keys ? i : (i - keys) * 4; // the last fifth writes keys seen before
            Document id = new Document("productId", key).append("storeId", key % 50);
            if (i < keys) {
                models.add(new ReplaceOneModel<>(Filters.eq("_id", id), new Document("_id", id).append("quantity", i),
                    new ReplaceOptions().upsert(true)));
            } else {
                models.add(new UpdateOneModel<>(Filters.eq("_id", id), Updates.inc("quantity", 1)));
            }
        }
    }

    @Benchmark
    public BulkPlan plan() {
        return planner.plan(models, PlanOptions.ordered());
    }
}
