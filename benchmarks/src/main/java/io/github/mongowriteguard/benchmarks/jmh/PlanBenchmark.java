package io.github.mongowriteguard.benchmarks.jmh;

import com.mongodb.MongoClientSettings;
import com.mongodb.client.model.Filters;
import com.mongodb.client.model.ReplaceOneModel;
import com.mongodb.client.model.ReplaceOptions;
import com.mongodb.client.model.UpdateOneModel;
import com.mongodb.client.model.Updates;
import com.mongodb.client.model.WriteModel;
import io.github.mongowriteguard.bulk.BulkPlan;
import io.github.mongowriteguard.bulk.Round;
import io.github.mongowriteguard.internal.command.CommandOptions;
import io.github.mongowriteguard.internal.command.WriteCommand;
import io.github.mongowriteguard.internal.command.WriteCommandEncoder;
import io.github.mongowriteguard.internal.plan.BulkPlanner;
import io.github.mongowriteguard.internal.plan.PlanOptions;
import io.github.mongowriteguard.internal.plan.PlannedBulk;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.bson.BsonBinaryWriter;
import org.bson.BsonDocument;
import org.bson.Document;
import org.bson.codecs.BsonDocumentCodec;
import org.bson.codecs.Codec;
import org.bson.codecs.EncoderContext;
import org.bson.codecs.configuration.CodecRegistry;
import org.bson.conversions.Bson;
import org.bson.io.BasicOutputBuffer;
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

/**
 * Planning and de-duplication alone ({@link BulkPlanner#plan}), no server: 100,000 ordered writes, a replacement
 * and an update per key over 80,000 keys, so a fifth of the keys are written twice and get a second round. The {@code _id} is compound, {@code {productId, storeId}}, as in the articles' store inventory.
 *
 * <p>{@code filters} chooses how the caller writes its filters: {@code Filters.eq("_id", id)} (the driver's builders)
 * or {@code new Document("_id", id)}. {@link #driverConversions} is the baseline measured beside the plan: turning
 * every filter and update into a {@code BsonDocument} with the driver's codecs, which the driver's own
 * {@code bulkWrite} does for the same models. The planner does it once per write too, and the guard sends what the
 * plan read, so the difference between the two rows is what planning adds.
 *
 * <p>{@link #planAndEncode} adds what the guard does next, before it sends: every round's commands encoded by its
 * encoder and made into the command as sent ({@code toCommand}). Its baseline {@link #driverConvertAndEncode} is the
 * driver's conversion plus the encoding of every statement ({@code {q, u, upsert}}) into one output buffer with the
 * driver's codecs, as the driver writes an OP_MSG document sequence. That baseline is built here from the driver's
 * public codecs (the driver's own {@code SplittablePayload} encoder is internal), so it is the floor of what the driver
 * does, not a copy of it.
 *
 * <pre>
 * java -jar benchmarks/target/lab.jar jmh PlanBenchmark
 * java -jar benchmarks/target/lab.jar jmh 'PlanBenchmark.(planAndEncode|driverConvertAndEncode)' -p writes=100000 -prof gc
 * </pre>
 *
 * <p>The fork runs on a fixed, pre-touched heap: on a growing heap, the first touch of new memory made single
 * operations take 1 to 2 s on the machines this was measured on, noise that has nothing to do with planning.
 */
@State(Scope.Benchmark)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.MILLISECONDS)
@Warmup(iterations = 5, time = 3)
@Measurement(iterations = 5, time = 2)
@Fork(
        value = 1,
        jvmArgsAppend = {"-Xms4g", "-Xmx4g", "-XX:+AlwaysPreTouch"})
public class PlanBenchmark {

    @Param({"10000", "100000"})
    public int writes;

    @Param({"Filters.eq", "Document"})
    public String filters;

    private BulkPlanner<Document> planner;
    private WriteCommandEncoder<Document> encoder;
    private List<WriteModel<Document>> models;

    @Setup
    public void prepare() {
        planner = BulkPlanner.of(Document.class, MongoClientSettings.getDefaultCodecRegistry());
        encoder = new WriteCommandEncoder<>("inventory", Document.class, MongoClientSettings.getDefaultCodecRegistry());
        int keys = writes * 4 / 5;
        models = new ArrayList<>(writes);
        for (int i = 0; i < writes; i++) {
            int key = i < keys ? i : (i - keys) * 4; // the last fifth writes keys seen before
            Document id = new Document("productId", key).append("storeId", key % 50);
            Bson filter = filters.equals("Document") ? new Document("_id", id) : Filters.eq("_id", id);
            if (i < keys) {
                models.add(new ReplaceOneModel<>(
                        filter, new Document("_id", id).append("quantity", i), new ReplaceOptions().upsert(true)));
            } else {
                models.add(new UpdateOneModel<>(filter, Updates.inc("quantity", 1)));
            }
        }
    }

    @Benchmark
    public BulkPlan plan() {
        return planner.plan(models, PlanOptions.ordered());
    }

    /**
     * The baseline: each filter and update as a {@code BsonDocument}, all kept until the end, as the driver's
     * {@code bulkWrite} keeps one {@code WriteRequest} per model before it sends the first batch.
     */
    @Benchmark
    public List<BsonDocument> driverConversions() {
        CodecRegistry registry = MongoClientSettings.getDefaultCodecRegistry();
        List<BsonDocument> converted = new ArrayList<>(writes + writes / 4);
        for (WriteModel<Document> model : models) {
            if (model instanceof ReplaceOneModel<Document> replace) {
                converted.add(read(replace.getFilter().toBsonDocument(Document.class, registry)));
            } else {
                UpdateOneModel<Document> update = (UpdateOneModel<Document>) model;
                converted.add(read(update.getFilter().toBsonDocument(Document.class, registry)));
                converted.add(read(update.getUpdate().toBsonDocument(Document.class, registry)));
            }
        }
        return converted;
    }

    /** The plan, then every round encoded as the guard sends it; returns the bytes, so nothing is optimised away. */
    @Benchmark
    public long planAndEncode() {
        PlannedBulk plan = planner.plan(models, PlanOptions.ordered());
        long bytes = 0;
        for (Round round : plan.rounds()) {
            for (WriteCommand command : encoder.encode(plan, round.indices(), round.isOrdered(), CommandOptions.NONE)) {
                // The guard's own bytes (a RawBsonDocument), or statement trees the driver encodes when it sends them.
                org.bson.BsonDocument sent = command.toCommand(1L, 30_000, null, null);
                bytes += sent instanceof org.bson.RawBsonDocument raw
                        ? raw.getByteBuffer().remaining()
                        : sent.size();
            }
        }
        return bytes;
    }

    /**
     * The baseline of {@link #planAndEncode}: {@link #driverConversions}, then every statement written into one output
     * buffer with the driver's codecs ({@code {q: filter, u: replacement or update, upsert: true}}), as the driver writes
     * the statements of its OP_MSG document sequence.
     */
    @Benchmark
    public long driverConvertAndEncode() {
        CodecRegistry registry = MongoClientSettings.getDefaultCodecRegistry();
        Codec<Document> documents = registry.get(Document.class);
        BsonDocumentCodec bsonDocuments = new BsonDocumentCodec();
        EncoderContext context = EncoderContext.builder().build();
        List<BsonDocument> converted = driverConversions();
        BasicOutputBuffer buffer = new BasicOutputBuffer(1 << 20);
        try (BsonBinaryWriter writer = new BsonBinaryWriter(buffer)) {
            int next = 0;
            for (WriteModel<Document> model : models) {
                writer.writeStartDocument();
                writer.writeName("q");
                bsonDocuments.encode(writer, converted.get(next++), context);
                writer.writeName("u");
                if (model instanceof ReplaceOneModel<Document> replace) {
                    documents.encode(writer, replace.getReplacement(), context);
                    writer.writeBoolean("upsert", true);
                } else {
                    bsonDocuments.encode(writer, converted.get(next++), context);
                }
                writer.writeEndDocument();
            }
        }
        return buffer.getPosition();
    }

    /** A {@code Document} converts lazily (a wrapper); reading it once converts it, as encoding would. */
    private static BsonDocument read(BsonDocument document) {
        document.size();
        return document;
    }
}
