package io.github.mongowriteguard.internal.command;

import static org.assertj.core.api.Assertions.assertThat;

import com.mongodb.MongoClientSettings;
import com.mongodb.client.model.DeleteOneModel;
import com.mongodb.client.model.Filters;
import com.mongodb.client.model.InsertOneModel;
import com.mongodb.client.model.UpdateOneModel;
import com.mongodb.client.model.Updates;
import com.mongodb.client.model.WriteModel;
import io.github.mongowriteguard.internal.plan.BulkPlanner;
import io.github.mongowriteguard.internal.plan.PlanOptions;
import io.github.mongowriteguard.internal.plan.PlannedBulk;
import java.util.ArrayList;
import java.util.List;
import java.util.stream.IntStream;
import org.bson.BsonDocument;
import org.bson.BsonInt32;
import org.bson.BsonString;
import org.bson.Document;
import org.bson.RawBsonDocument;
import org.bson.codecs.DocumentCodec;
import org.junit.jupiter.api.Test;

/**
 * How a round becomes write commands: cut at mongod's maxWriteBatchSize (100,000 statements) and near 16 MiB. Without a
 * server: 100,001 inserts through the emulator take over 10 s (its engine is slow), longer than a test should.
 */
class WriteCommandEncoderTest {
    private final WriteCommandEncoder<Document> encoder =
            new WriteCommandEncoder<>("stock", Document.class, MongoClientSettings.getDefaultCodecRegistry());

    @Test
    void roundOverMaxWriteBatchSize_isSplitIntoSeveralCommands_keepingEveryIndexOnce() {
        List<WriteModel<Document>> models = new ArrayList<>();
        for (int i = 0; i < 200_001; i++) {
            models.add(new InsertOneModel<>(new Document("_id", i)));
        }

        List<WriteCommand> commands = encoder.encode(plan(models), indices(models.size()), false, CommandOptions.NONE);

        assertThat(commands).extracting(WriteCommand::size).containsExactly(100_000, 100_000, 1);
        assertThat(commands).allSatisfy(command -> assertThat(command.ordered()).isFalse());
        assertThat(commands.get(1).index(0)).isEqualTo(100_000);
        assertThat(commands.get(2).index(0)).isEqualTo(200_000);
        assertThat(commands.get(2).toCommand(1L, 2_000, null, null).getArray("documents"))
                .hasSize(1);
    }

    @Test
    void orderedRoundOverMaxWriteBatchSize_isSplitToo_andKeepsOneCommandPerRunOfAKind() {
        List<WriteModel<Document>> models = new ArrayList<>();
        for (int i = 0; i < 100_001; i++) {
            models.add(new UpdateOneModel<>(Filters.eq("_id", i), Updates.inc("n", 1)));
        }
        models.add(new DeleteOneModel<>(Filters.eq("_id", 0)));

        List<WriteCommand> commands = encoder.encode(plan(models), indices(models.size()), true, CommandOptions.NONE);

        assertThat(commands)
                .extracting(WriteCommand::type)
                .containsExactly(
                        WriteCommand.CommandType.UPDATE,
                        WriteCommand.CommandType.UPDATE,
                        WriteCommand.CommandType.DELETE);
        assertThat(commands).extracting(WriteCommand::size).containsExactly(100_000, 1, 1);
        assertThat(commands).allSatisfy(command -> assertThat(command.ordered()).isTrue());
    }

    @Test
    void roundOver16MiB_isSplitBelowTheCommandSizeLimit() {
        String big = "x".repeat(4 * 1024 * 1024);
        List<WriteModel<Document>> models = new ArrayList<>();
        for (int i = 0; i < 5; i++) {
            models.add(new InsertOneModel<>(new Document("_id", i).append("big", big)));
        }

        List<WriteCommand> commands = encoder.encode(plan(models), indices(models.size()), false, CommandOptions.NONE);

        assertThat(commands).extracting(WriteCommand::size).containsExactly(3, 2);
    }

    @Test
    void statementsOfExactlyTheLimit_shareOneCommand_andOneByteMoreIsCut() {
        // Statement i is its array element: type byte, the name "i" and its terminator, then the document.
        Document second = new Document("_id", 1);
        Document third = new Document("_id", 2);
        int firstBytes = WriteCommandEncoder.MAX_STATEMENT_BYTES - 3 - (3 + encodedSize(second));
        for (int extra = 0; extra <= 1; extra++) {
            Document first = documentOfSize(firstBytes + extra);
            List<WriteModel<Document>> models =
                    List.of(new InsertOneModel<>(first), new InsertOneModel<>(second), new InsertOneModel<>(third));

            List<WriteCommand> commands = encoder.encode(plan(models), indices(3), false, CommandOptions.NONE);

            assertThat(commands).extracting(WriteCommand::size).containsExactly(extra == 0 ? 2 : 1, extra == 0 ? 1 : 2);
            BsonDocument sent = commands.get(0).toCommand(1L, 2_000, null, null);
            assertThat(sent.getArray("documents")
                            .get(0)
                            .asDocument()
                            .getString("big")
                            .getValue())
                    .isEqualTo(first.getString("big"));
        }
    }

    @Test
    void documentOfExactly16MiB_isACommandOfItsOwn() {
        Document big = documentOfSize(16 * 1024 * 1024);
        List<WriteModel<Document>> models = List.of(
                new InsertOneModel<>(new Document("_id", 1)),
                new InsertOneModel<>(big),
                new InsertOneModel<>(new Document("_id", 3)));

        List<WriteCommand> commands = encoder.encode(plan(models), indices(3), false, CommandOptions.NONE);

        assertThat(commands).extracting(WriteCommand::size).containsExactly(1, 1, 1);
        assertThat(commands.get(1)
                        .toCommand(1L, 2_000, null, null)
                        .getArray("documents")
                        .get(0)
                        .asDocument()
                        .getInt32("_id"))
                .isEqualTo(new BsonInt32(2));
    }

    /** {@code {_id: 0 or 2, big: "xxx..."}} of exactly {@code bytes} encoded bytes. */
    private static Document documentOfSize(int bytes) {
        Document shell = new Document("_id", bytes > 16 * 1024 * 1024 - 64 ? 2 : 0).append("big", "");
        return new Document(shell).append("big", "x".repeat(bytes - encodedSize(shell)));
    }

    private static int encodedSize(Document document) {
        return new RawBsonDocument(document, new DocumentCodec())
                .getByteBuffer()
                .remaining();
    }

    @Test
    void filterIsSentAsPlanned_evenIfTheCallerChangesItAfterPlanning() {
        Document filter = new Document("_id", 1);
        List<WriteModel<Document>> models = List.of(new UpdateOneModel<>(filter, Updates.inc("n", 1)));
        PlannedBulk plan = plan(models);
        filter.put("_id", 2);

        List<WriteCommand> commands = encoder.encode(plan, indices(1), false, CommandOptions.NONE);

        assertThat(commands.get(0)
                        .toCommand(7L, 2_000, null, null)
                        .getArray("updates")
                        .get(0)
                        .asDocument()
                        .getDocument("q"))
                .isEqualTo(new BsonDocument("_id", new BsonInt32(1)));
    }

    @Test
    void updateBuiltWithABuilder_isConvertedOnce_andSentAsPlanned() {
        java.util.concurrent.atomic.AtomicInteger conversions = new java.util.concurrent.atomic.AtomicInteger();
        org.bson.conversions.Bson counting = new org.bson.conversions.Bson() {
            @Override
            public <C> BsonDocument toBsonDocument(
                    Class<C> documentClass, org.bson.codecs.configuration.CodecRegistry registry) {
                conversions.incrementAndGet();
                return Updates.combine(Updates.inc("n", 1), Updates.set("s", "a"))
                        .toBsonDocument(documentClass, registry);
            }
        };
        List<WriteModel<Document>> models = List.of(
                new UpdateOneModel<>(Filters.eq("_id", 1), counting),
                new com.mongodb.client.model.UpdateManyModel<>(Filters.gt("n", 1), counting));

        List<WriteCommand> commands = encoder.encode(plan(models), indices(2), true, CommandOptions.NONE);

        // The driver converts each update once per bulk (its WriteRequest); so does the guard, while planning.
        assertThat(conversions).hasValue(2);
        assertThat(commands).hasSize(2); // single- and multi-document statements never share a command
        for (WriteCommand command : commands) {
            assertThat(command.toCommand(7L, 2_000, null, null)
                            .getArray("updates")
                            .get(0)
                            .asDocument()
                            .getDocument("u"))
                    .isEqualTo(BsonDocument.parse("{$inc: {n: 1}, $set: {s: 'a'}}"));
        }
    }

    @Test
    void command_holdsTheStatementsThenThePerSendFields() {
        List<WriteModel<Document>> models =
                List.of(new InsertOneModel<>(new Document("_id", 1)), new DeleteOneModel<>(Filters.eq("_id", 2)));

        List<WriteCommand> commands = encoder.encode(plan(models), indices(2), false, CommandOptions.NONE);

        assertThat(commands.get(0)
                        .toCommand(7L, 2_000, new BsonDocument("w", new BsonString("majority")), new BsonString("c")))
                .isEqualTo(BsonDocument.parse(
                        "{insert: 'stock', ordered: false, documents: [{_id: 1}], maxTimeMS: {$numberLong: '2000'},"
                                + " txnNumber: {$numberLong: '7'}, writeConcern: {w: 'majority'}, comment: 'c'}"));
        assertThat(commands.get(1).toCommand(null, 2_000, null, null))
                .isEqualTo(BsonDocument.parse("{delete: 'stock', ordered: false, deletes: [{q: {_id: 2}, limit: 1}],"
                        + " maxTimeMS: {$numberLong: '2000'}}"));
        assertThat(commands.get(1).retryable()).isTrue();
    }

    @Test
    void commandsOneAtATimeInOneReusedBuffer_areByteForByteTheCommandsOfEncode() {
        // Large documents cut near 16 MiB, then small statements of other kinds written over the large buffer.
        List<WriteModel<Document>> models = new ArrayList<>();
        for (int i = 0; i < 20; i++) {
            models.add(new InsertOneModel<>(new Document("_id", i).append("big", "x".repeat(1024 * 1024))));
        }
        models.add(new UpdateOneModel<>(Filters.eq("_id", 1), Updates.inc("n", 1)));
        models.add(new DeleteOneModel<>(Filters.eq("_id", 2)));
        models.add(new InsertOneModel<>(new Document("_id", 99)));
        for (boolean ordered : new boolean[] {true, false}) {
            PlannedBulk plan = plan(models);
            List<BsonDocument> expected = new ArrayList<>();
            for (WriteCommand command : encoder.encode(plan, indices(models.size()), ordered, CommandOptions.NONE)) {
                expected.add(copy(command.toCommand(3L, 2_000, null, null)));
            }

            List<BsonDocument> sent = new ArrayList<>();
            List<Integer> sentIndices = new ArrayList<>();
            WriteCommandEncoder<Document>.Commands commands =
                    encoder.commands(plan, indices(models.size()), ordered, CommandOptions.NONE, false);
            while (commands.hasNext()) {
                WriteCommand command = commands.next();
                sent.add(copy(command.toCommand(3L, 2_000, null, null)));
                for (int position = 0; position < command.size(); position++) {
                    sentIndices.add(command.index(position));
                }
                List<Integer> expectedRest = new ArrayList<>(indices(models.size()));
                if (ordered) {
                    assertThat(commands.remaining()).isEqualTo(expectedRest.subList(sentIndices.size(), 23));
                }
            }

            assertThat(sent).hasSize(expected.size()).isEqualTo(expected);
            assertThat(sent.get(0).getArray("documents")).hasSizeLessThan(20); // cut near 16 MiB
            assertThat(commands.remaining()).isEmpty();
        }
    }

    /** The bytes of a command now, which the next command of a reused buffer writes over. */
    private static RawBsonDocument copy(BsonDocument command) {
        return new RawBsonDocument(TreeCommandsTest.asTheDriverEncodes(command));
    }

    private static PlannedBulk plan(List<WriteModel<Document>> models) {
        return BulkPlanner.of(Document.class, MongoClientSettings.getDefaultCodecRegistry())
                .plan(models, PlanOptions.ordered());
    }

    private static List<Integer> indices(int n) {
        return IntStream.range(0, n).boxed().toList();
    }
}
