package io.github.mongowriteguard.internal.command;

import static org.assertj.core.api.Assertions.assertThat;

import com.mongodb.MongoClientSettings;
import com.mongodb.client.model.Collation;
import com.mongodb.client.model.DeleteManyModel;
import com.mongodb.client.model.DeleteOneModel;
import com.mongodb.client.model.DeleteOptions;
import com.mongodb.client.model.Filters;
import com.mongodb.client.model.InsertOneModel;
import com.mongodb.client.model.ReplaceOneModel;
import com.mongodb.client.model.ReplaceOptions;
import com.mongodb.client.model.UpdateManyModel;
import com.mongodb.client.model.UpdateOneModel;
import com.mongodb.client.model.UpdateOptions;
import com.mongodb.client.model.Updates;
import com.mongodb.client.model.WriteModel;
import io.github.mongowriteguard.bulk.Round;
import io.github.mongowriteguard.internal.plan.BulkPlanner;
import io.github.mongowriteguard.internal.plan.PlanOptions;
import io.github.mongowriteguard.internal.plan.PlannedBulk;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Random;
import java.util.Set;
import java.util.stream.IntStream;
import org.bson.BsonBinaryWriter;
import org.bson.BsonBinaryWriterSettings;
import org.bson.BsonDocument;
import org.bson.BsonElement;
import org.bson.BsonInt32;
import org.bson.BsonInt64;
import org.bson.BsonString;
import org.bson.BsonWriterSettings;
import org.bson.Document;
import org.bson.RawBsonDocument;
import org.bson.codecs.configuration.CodecRegistry;
import org.bson.conversions.Bson;
import org.bson.io.BasicOutputBuffer;
import org.bson.types.ObjectId;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * The statements array the guard frames itself ({@link EncodedCommandWriter}: each element's type byte and decimal
 * name written into the buffer, the statement by a writer of its own) is byte for byte what a {@code BsonBinaryWriter}
 * writes for {@code writeStartArray} and one {@link StatementWriter#write} per element, the encoding before it, and is
 * cut at the same statements: random bulks of every kind of write, names from 0 to 99,999 (past bson's cache of the
 * first 1,000 names), cuts at 100,000 statements and at the command's byte limit, nested and large documents, and
 * documents the codec pipes ({@code RawBsonDocument}).
 */
class EncodedStatementsArrayTest {
    private static final CodecRegistry REGISTRY = MongoClientSettings.getDefaultCodecRegistry();
    private static final CommandOptions OPTIONS =
            new CommandOptions(true, null, new BsonDocument("limit", new BsonInt32(3)));

    @ParameterizedTest
    @ValueSource(longs = {1, 2, 3, 4, 5, 6, 7, 8})
    void randomBulks_areTheBytesOfBsonBinaryWriter_inEveryRound(long seed) {
        Random random = new Random(seed);
        List<WriteModel<Document>> models = randomBulk(random, 300 + random.nextInt(1_700));
        for (boolean ordered : new boolean[] {true, false}) {
            PlannedBulk plan = plan(models, ordered);
            // Every statement through the guard's own bytes, and the encoder as configured (trees where they pay).
            for (WriteCommandEncoder<Document> encoder : List.of(encodedOnly(Document.class), defaultEncoder())) {
                int compared = 0;
                for (Round round : plan.rounds()) {
                    for (CommandOptions options : List.of(CommandOptions.NONE, OPTIONS)) {
                        compared += assertSameBytes(
                                encoder.encode(plan, round.indices(), round.isOrdered(), options),
                                plan,
                                options,
                                Document.class);
                    }
                }
                assertThat(compared).isPositive();
            }
        }
    }

    @Test
    void namesPastTheCacheOfBson_upToTheLastOfACommand_andTheCutAt100000Statements() {
        List<WriteModel<Document>> updates = new ArrayList<>();
        for (int i = 0; i < 100_000 + 10_005; i++) {
            updates.add(
                    i % 3 == 0
                            ? new UpdateOneModel<>(new Document("_id", i), Updates.inc("n", i))
                            : new UpdateOneModel<>(Filters.eq("_id", i), Updates.set("v", i)));
        }
        PlannedBulk plan = plan(updates, false);
        List<WriteCommand> cut = encodedOnly(Document.class).encode(plan, indices(updates.size()), false, OPTIONS);

        assertThat(cut).extracting(WriteCommand::size).containsExactly(100_000, 10_005);
        assertThat(cut.get(1).index(0)).isEqualTo(100_000);
        assertThat(assertSameBytes(cut, plan, OPTIONS, Document.class)).isEqualTo(updates.size());
        BsonDocument sent = cut.get(0).toCommand(1L, 2_000, null, null);
        assertThat(sent.getArray("updates").get(99_999).asDocument().getDocument("q"))
                .isEqualTo(new BsonDocument("_id", new BsonInt32(99_999)));
    }

    @Test
    void aCommandCutByItsBytes_holdsTheStatementsOfBsonBinaryWriter_upToTheLimit_andNoMore() {
        // About 200 bytes per statement: 16 MiB is reached near statement 83,000, before 100,000.
        String padding = "p".repeat(160);
        List<WriteModel<Document>> models = new ArrayList<>();
        for (int i = 0; i < 95_000; i++) {
            models.add(new UpdateOneModel<>(Filters.eq("_id", i), Updates.set("v", padding + i)));
        }
        PlannedBulk plan = plan(models, false);
        for (boolean reuse : new boolean[] {false, true}) {
            WriteCommandEncoder<Document> encoder = encodedOnly(Document.class);
            List<WriteCommand> commands;
            int statements = 0;
            if (reuse) {
                // One buffer written over by each command: compare each before asking for the next.
                commands = new ArrayList<>();
                WriteCommandEncoder<Document>.Commands each =
                        encoder.commands(plan, indices(models.size()), false, CommandOptions.NONE, false);
                while (each.hasNext()) {
                    WriteCommand command = each.next();
                    statements += assertSameBytes(List.of(command), plan, CommandOptions.NONE, Document.class);
                    commands.add(command);
                }
            } else {
                commands = encoder.encode(plan, indices(models.size()), false, CommandOptions.NONE);
                statements = assertSameBytes(commands, plan, CommandOptions.NONE, Document.class);
            }
            assertThat(statements).isEqualTo(models.size());
            assertThat(commands).hasSizeGreaterThan(1);
            WriteCommand first = commands.get(0);
            assertThat(first.size()).isBetween(10_000, 99_999);
            long statementBytes = referenceStatementBytes(first, plan, 0, first.size(), Document.class);
            long withNext = statementBytes
                    + referenceStatementBytes(
                            commands.get(1), plan, 0, 1, Document.class) // its name "0" against the first's last
                    + (Integer.toString(first.size()).length() - 1);
            assertThat(statementBytes).isLessThanOrEqualTo(WriteCommandEncoder.MAX_STATEMENT_BYTES);
            assertThat(withNext).isGreaterThan(WriteCommandEncoder.MAX_STATEMENT_BYTES);
        }
    }

    @Test
    void nestedAndLargeDocuments_andOversizedStatementsAlone_areTheSameBytes() {
        List<WriteModel<Document>> models = new ArrayList<>();
        Document nested = new Document("leaf", 1);
        for (int depth = 0; depth < 90; depth++) {
            nested = new Document("d" + depth, nested).append("list", List.of(depth, new Document("x", depth)));
        }
        String mebibytes = "m".repeat(5 * 1024 * 1024);
        for (int i = 0; i < 7; i++) {
            models.add(new ReplaceOneModel<>(
                    Filters.eq("_id", i),
                    new Document("_id", i).append("nested", nested).append("big", i % 3 == 0 ? mebibytes : "s"),
                    new ReplaceOptions().upsert(true)));
            models.add(
                    new UpdateOneModel<>(Filters.eq("_id", 100 + i), Updates.set("big", i % 2 == 0 ? mebibytes : "u")));
            models.add(new InsertOneModel<>(new Document("_id", 200 + i).append("nested", nested)));
        }
        for (boolean ordered : new boolean[] {true, false}) {
            PlannedBulk plan = plan(models, ordered);
            for (Round round : plan.rounds()) {
                List<WriteCommand> commands =
                        encodedOnly(Document.class).encode(plan, round.indices(), round.isOrdered(), OPTIONS);
                assertSameBytes(commands, plan, OPTIONS, Document.class);
                List<WriteCommand> alone = encodedOnly(Document.class)
                        .encode(plan, round.indices(), round.isOrdered(), CommandOptions.NONE, true);
                assertSameBytes(alone, plan, CommandOptions.NONE, Document.class);
            }
        }
    }

    @Test
    void documentsTheCodecPipes_rawDocuments_areTheSameBytes() {
        List<WriteModel<RawBsonDocument>> models = new ArrayList<>();
        for (int i = 0; i < 2_500; i++) {
            RawBsonDocument document = RawBsonDocument.parse("{_id: " + i + ", n: {a: [1, 2, {b: 'c" + i + "'}]}}");
            models.add(
                    i % 2 == 0
                            ? new InsertOneModel<>(document)
                            : new ReplaceOneModel<>(Filters.eq("_id", i), document, new ReplaceOptions().upsert(true)));
        }
        BulkPlanner<RawBsonDocument> planner = BulkPlanner.of(RawBsonDocument.class, REGISTRY);
        PlannedBulk plan =
                planner.plan(models, PlanOptions.from(new com.mongodb.client.model.BulkWriteOptions(), false));
        for (WriteCommandEncoder<RawBsonDocument> encoder : List.of(
                encodedOnly(RawBsonDocument.class),
                new WriteCommandEncoder<>("stock", RawBsonDocument.class, REGISTRY))) {
            for (Round round : plan.rounds()) {
                assertSameBytes(
                        encoder.encode(plan, round.indices(), round.isOrdered(), CommandOptions.NONE),
                        plan,
                        CommandOptions.NONE,
                        RawBsonDocument.class);
            }
        }
    }

    @Test
    void theNamesBytes_areTheSumOfEveryNameAndItsTerminator() {
        Set<Integer> checked =
                Set.of(0, 1, 2, 9, 10, 11, 99, 100, 101, 999, 1_000, 1_001, 9_999, 10_000, 99_999, 100_000);
        long sum = 0;
        for (int n = 0; n <= 100_000; n++) {
            if (checked.contains(n)) {
                assertThat(EncodedCommandWriter.arrayIndexNameBytes(n))
                        .as("n %d", n)
                        .isEqualTo(sum);
            }
            sum += Integer.toString(n).length() + 1;
        }
    }

    /**
     * Asserts that every command the guard encoded itself is, with the same per-send fields, the bytes of the
     * reference encoding; returns how many statements were compared.
     */
    private static <T> int assertSameBytes(
            List<WriteCommand> commands, PlannedBulk plan, CommandOptions options, Class<T> documentClass) {
        int statements = 0;
        for (WriteCommand command : commands) {
            if (command.encodedByDriver()) {
                continue;
            }
            BsonDocument writeConcern = new BsonDocument("w", new BsonString("majority"));
            RawBsonDocument sent = (RawBsonDocument) command.toCommand(42L, 1_500, writeConcern, new BsonString("c"));
            byte[] actual = bytes(sent);
            byte[] expected = reference(command, plan, options, documentClass, writeConcern);
            assertThat(actual).as("%s", command).isEqualTo(expected);
            statements += command.size();
        }
        return statements;
    }

    /**
     * The command as the encoder wrote it before: one {@code BsonBinaryWriter} for the whole command, the statements in
     * its array, then the same per-send fields.
     */
    private static <T> byte[] reference(
            WriteCommand command,
            PlannedBulk plan,
            CommandOptions options,
            Class<T> documentClass,
            BsonDocument writeConcern) {
        StatementBucket bucket = StatementBucket.of(plan.sentAs(command.index(0)));
        BasicOutputBuffer out = new BasicOutputBuffer();
        try (BsonBinaryWriter writer = referenceWriter(out)) {
            writer.writeStartDocument();
            writer.writeString(bucket.kind.commandName(), "stock");
            writer.writeBoolean("ordered", command.ordered());
            if (options.bypassDocumentValidation() != null) {
                writer.writeBoolean("bypassDocumentValidation", options.bypassDocumentValidation());
            }
            if (options.let() != null) {
                writer.writeName("let");
                StatementWriter.BSON_CODEC.encode(writer, options.let(), StatementWriter.CONTEXT);
            }
            writer.writeStartArray(bucket.kind.statementsField());
            StatementWriter<T> statements = new StatementWriter<>(documentClass, REGISTRY);
            for (int position = 0; position < command.size(); position++) {
                statements.write(writer, command.index(position), plan);
            }
            writer.writeEndArray();
            int bodyEnd = out.getPosition();
            writer.writeEndDocument();
            List<BsonElement> fields = List.of(
                    new BsonElement("maxTimeMS", new BsonInt64(1_500)),
                    new BsonElement("txnNumber", new BsonInt64(42L)),
                    new BsonElement("writeConcern", writeConcern),
                    new BsonElement("comment", new BsonString("c")));
            return bytes(new EncodedCommandBody(Arrays.copyOf(out.getInternalBuffer(), out.getPosition()), bodyEnd)
                    .withSendFields(fields));
        }
    }

    /** The bytes of statements {@code from} to {@code to} of the command as array elements, named from 0. */
    private static <T> long referenceStatementBytes(
            WriteCommand command, PlannedBulk plan, int from, int to, Class<T> documentClass) {
        BasicOutputBuffer out = new BasicOutputBuffer();
        try (BsonBinaryWriter writer = referenceWriter(out)) {
            writer.writeStartDocument();
            writer.writeStartArray("a");
            int start = out.getPosition();
            StatementWriter<T> statements = new StatementWriter<>(documentClass, REGISTRY);
            for (int position = from; position < to; position++) {
                statements.write(writer, command.index(position), plan);
            }
            long bytes = out.getPosition() - start;
            writer.writeEndArray();
            writer.writeEndDocument();
            return bytes;
        }
    }

    /** One writer for the whole command, its statements two levels down, as the encoder wrote them before. */
    private static BsonBinaryWriter referenceWriter(BasicOutputBuffer out) {
        return new BsonBinaryWriter(
                new BsonWriterSettings(EncodedCommandWriter.DRIVER_MAX_DEPTH + 2), new BsonBinaryWriterSettings(), out);
    }

    private static byte[] bytes(RawBsonDocument document) {
        ByteBuffer buffer = document.getByteBuffer().asNIO();
        byte[] bytes = new byte[buffer.remaining()];
        buffer.get(bytes);
        return bytes;
    }

    private static <T> WriteCommandEncoder<T> encodedOnly(Class<T> documentClass) {
        return new WriteCommandEncoder<>("stock", documentClass, REGISTRY, Long.MAX_VALUE);
    }

    private static WriteCommandEncoder<Document> defaultEncoder() {
        return new WriteCommandEncoder<>("stock", Document.class, REGISTRY);
    }

    private static PlannedBulk plan(List<WriteModel<Document>> models, boolean ordered) {
        return BulkPlanner.of(Document.class, REGISTRY)
                .plan(
                        models,
                        PlanOptions.from(new com.mongodb.client.model.BulkWriteOptions().ordered(ordered), false));
    }

    private static List<Integer> indices(int n) {
        return IntStream.range(0, n).boxed().toList();
    }

    /** Every kind of write, keyed and not, with options, nested values and repeated keys. */
    private static List<WriteModel<Document>> randomBulk(Random random, int size) {
        List<WriteModel<Document>> models = new ArrayList<>(size);
        Collation collation = Collation.builder().locale("en").build();
        for (int i = 0; i < size; i++) {
            int key = random.nextInt(size / 2 + 1);
            Object id = random.nextInt(4) == 0 ? new Document("k", key).append("s", "x" + key) : key;
            Bson filter = random.nextBoolean() ? Filters.eq("_id", id) : new Document("_id", id);
            Document document = new Document("_id", id)
                    .append("n", random.nextInt())
                    .append("tags", List.of("a", random.nextInt(9)))
                    .append(
                            "inner",
                            new Document("at", random.nextLong())
                                    .append("text", "t\u00e9".repeat(random.nextInt(30)))
                                    .append("na\u00efve \ud83d\ude00", random.nextBoolean()));
            switch (random.nextInt(9)) {
                case 0 -> models.add(new InsertOneModel<>(new Document(document).append("_id", new ObjectId())));
                case 1 -> models.add(new InsertOneModel<>(new Document("noId", i).append("inner", document)));
                case 2 ->
                    models.add(new ReplaceOneModel<>(
                            filter,
                            random.nextBoolean() ? document : new Document("big", "b".repeat(1_100)).append("_id", id),
                            new ReplaceOptions().upsert(random.nextBoolean())));
                case 3 ->
                    models.add(new UpdateOneModel<>(
                            filter,
                            Updates.combine(Updates.set("n", i), Updates.inc("c", 1)),
                            new UpdateOptions().upsert(random.nextBoolean()).collation(collation)));
                case 4 ->
                    models.add(new UpdateOneModel<>(
                            filter,
                            List.of(new Document("$set", new Document("p", i))),
                            new UpdateOptions().hint(new Document("n", 1))));
                case 5 ->
                    models.add(new UpdateManyModel<>(
                            random.nextBoolean() ? filter : Filters.gt("n", i),
                            Updates.set("tags.$[t]", "z"),
                            new UpdateOptions().arrayFilters(List.of(Filters.eq("t", "a")))));
                case 6 -> models.add(new DeleteOneModel<>(filter, new DeleteOptions().hintString("n_1")));
                case 7 ->
                    models.add(new DeleteManyModel<>(
                            random.nextBoolean() ? filter : Filters.lt("n", i),
                            new DeleteOptions().collation(collation)));
                default -> models.add(new UpdateOneModel<>(filter, new Document("$inc", new Document("n", 1))));
            }
        }
        return models;
    }
}
