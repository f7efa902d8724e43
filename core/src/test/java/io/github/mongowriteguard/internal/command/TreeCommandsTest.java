package io.github.mongowriteguard.internal.command;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.mongodb.MongoClientSettings;
import com.mongodb.client.model.DeleteOneModel;
import com.mongodb.client.model.Filters;
import com.mongodb.client.model.InsertOneModel;
import com.mongodb.client.model.WriteModel;
import io.github.mongowriteguard.internal.plan.BulkPlanner;
import io.github.mongowriteguard.internal.plan.PlanOptions;
import io.github.mongowriteguard.internal.plan.PlannedBulk;
import java.math.BigDecimal;
import java.util.ArrayList;
import java.util.Date;
import java.util.List;
import java.util.Random;
import java.util.stream.IntStream;
import org.bson.BsonBinaryWriter;
import org.bson.BsonBinaryWriterSettings;
import org.bson.BsonBoolean;
import org.bson.BsonDocument;
import org.bson.BsonDocumentWrapper;
import org.bson.BsonDocumentWriter;
import org.bson.BsonInt32;
import org.bson.BsonJavaScriptWithScope;
import org.bson.BsonSerializationException;
import org.bson.BsonString;
import org.bson.BsonValue;
import org.bson.BsonWriterSettings;
import org.bson.Document;
import org.bson.RawBsonDocument;
import org.bson.codecs.BsonValueCodecProvider;
import org.bson.codecs.DocumentCodec;
import org.bson.codecs.Encoder;
import org.bson.codecs.EncoderContext;
import org.bson.codecs.configuration.CodecRegistries;
import org.bson.codecs.configuration.CodecRegistry;
import org.bson.io.BasicOutputBuffer;
import org.bson.types.Binary;
import org.bson.types.Decimal128;
import org.bson.types.ObjectId;
import org.junit.jupiter.api.Test;

/**
 * Inserts sent as statement trees that the driver encodes (instead of the guard's own bytes, which the driver copies
 * once more) must give the server the same command, byte for byte, cut at the same statements. Each command is encoded
 * here as the driver 5.6.5 encodes {@code runCommand}'s command ({@code CommandMessage.writeCommand}: the fixed
 * {@code BsonValueCodecProvider} registry, chosen by the command's class, into a writer of 1,024 levels and
 * {@code maxBsonObjectSize} + 16 KiB), once from the trees and once from the guard's bytes of the same plan.
 */
class TreeCommandsTest {
    private static final CodecRegistry REGISTRY = MongoClientSettings.getDefaultCodecRegistry();
    private static final CodecRegistry DRIVER_COMMAND_CODECS =
            CodecRegistries.fromProviders(new BsonValueCodecProvider());
    private static final int BINARY_SUBTYPE_OLD = 2;
    private static final int MIB = 1024 * 1024;

    /** The bytes the driver writes for {@code command} as {@code runCommand}'s command. */
    static byte[] asTheDriverEncodes(BsonDocument command) {
        BasicOutputBuffer out = new BasicOutputBuffer();
        try (BsonBinaryWriter writer = new BsonBinaryWriter(
                new BsonWriterSettings(), new BsonBinaryWriterSettings(16 * MIB + 16 * 1024), out)) {
            @SuppressWarnings("unchecked")
            Encoder<BsonDocument> encoder = (Encoder<BsonDocument>) DRIVER_COMMAND_CODECS.get(command.getClass());
            encoder.encode(writer, command, EncoderContext.builder().build());
        }
        return out.toByteArray();
    }

    @Test
    void randomDocuments_sentAsTrees_areByteForByteTheGuardsOwnBytes_cutAtTheSameStatements() {
        int cutBulks = 0;
        for (int seed = 0; seed < 60; seed++) {
            Random random = new Random(seed);
            List<Document> documents = new ArrayList<>();
            int count = 1 + random.nextInt(seed % 10 == 0 ? 24 : 8);
            for (int i = 0; i < count; i++) {
                documents.add(randomDocument(random, i, seed % 10 == 0));
            }
            CommandOptions options = random.nextBoolean()
                    ? CommandOptions.NONE
                    : new CommandOptions(random.nextBoolean(), new BsonString("c"), BsonDocument.parse("{limit: 10}"));
            // The same objects both ways: the first plan gives those without _id an ObjectId, the second keeps it.
            boolean asBson = random.nextBoolean();
            List<BsonDocument> bson = asBson ? toBson(documents) : List.of();
            boolean ordered = seed % 3 == 0;
            List<WriteCommand> trees =
                    asBson ? encodeBsonDocuments(bson, 0, options, ordered) : encode(documents, 0, options, ordered);
            List<WriteCommand> bytes = asBson
                    ? encodeBsonDocuments(bson, Long.MAX_VALUE, options, ordered)
                    : encode(documents, Long.MAX_VALUE, options, ordered);

            assertThat(trees).allMatch(WriteCommand::encodedByDriver, "seed " + seed + ": every command as trees");
            assertThat(bytes).noneMatch(WriteCommand::encodedByDriver);
            assertSameCommands("seed " + seed, trees, bytes);
            cutBulks += trees.size() > 1 ? 1 : 0;
        }
        assertThat(cutBulks).as("bulks whose inserts were cut near 16 MiB").isPositive();
    }

    @Test
    void documentsAtExactlyTheCut_andOneByteOver_areCutAtTheSameStatement() {
        // Statement i is its array element: type byte, the name "i" and its terminator, then the document.
        Document second = new Document("_id", 1).append("p", new Binary(new byte[8]));
        int firstBytes = WriteCommandEncoder.MAX_STATEMENT_BYTES - 3 - (3 + encodedSize(second));
        for (int extra = 0; extra <= 1; extra++) {
            List<Document> documents = List.of(
                    binaryOfSize(firstBytes + extra, 0),
                    second,
                    new Document("_id", 2).append("p", new Binary(new byte[3])));

            List<WriteCommand> trees = encode(documents, 0, CommandOptions.NONE, false);

            assertThat(trees).extracting(WriteCommand::size).containsExactly(extra == 0 ? 2 : 1, extra == 0 ? 1 : 2);
            assertThat(trees).allMatch(WriteCommand::encodedByDriver);
            assertSameCommands("extra " + extra, trees, encode(documents, Long.MAX_VALUE, CommandOptions.NONE, false));
        }
    }

    @Test
    void documentOfExactly16MiB_isACommandOfItsOwn_asTrees() {
        List<Document> documents = List.of(
                new Document("_id", 1).append("p", new Binary(new byte[20_000])),
                binaryOfSize(16 * MIB, 2),
                new Document("_id", 3).append("p", new Binary(new byte[20_000])));

        List<WriteCommand> trees = encode(documents, 0, CommandOptions.NONE, false);

        assertThat(trees).extracting(WriteCommand::size).containsExactly(1, 1, 1);
        assertThat(trees).allMatch(WriteCommand::encodedByDriver);
        assertSameCommands("16 MiB", trees, encode(documents, Long.MAX_VALUE, CommandOptions.NONE, false));
    }

    @Test
    void documentsByDefault_areTreesWhateverTheirSize_andOnesOfAnotherFormTheGuardsBytes() {
        WriteCommandEncoder<Document> encoder = new WriteCommandEncoder<>("c", Document.class, REGISTRY);
        List<Document> large = List.of(
                new Document("_id", 1).append("p", new Binary(new byte[20_000])),
                new Document("_id", 2).append("p", new Binary(new byte[10])));
        List<Document> small = List.of(new Document("_id", 1).append("p", new Binary(new byte[1_000])));
        List<Document> otherForm = List.of(new Document("_id", 1).append("short", (short) 5));

        assertThat(encoder.encode(plan(large, Document.class), indices(2), false, CommandOptions.NONE))
                .singleElement()
                .matches(WriteCommand::encodedByDriver);
        assertThat(encoder.encode(plan(small, Document.class), indices(1), false, CommandOptions.NONE))
                .singleElement()
                .matches(WriteCommand::encodedByDriver);
        assertThat(encoder.encode(plan(otherForm, Document.class), indices(1), false, CommandOptions.NONE))
                .singleElement()
                .matches(command -> !command.encodedByDriver());
    }

    @Test
    void statementsTheArithmeticIsNotSureOf_makeTheCommandTheGuardsOwnBytes_withTheSameCuts() {
        List<Document> unsure = List.of(
                new Document("_id", 1).append("short", (short) 5), // a codec of its own
                new Document("_id", 2).append("s", "smile \uD83D\uDE00"), // surrogates
                deep(1_023)); // deeper than a statement may nest two levels down the command
        for (Document document : unsure) {
            List<Document> documents = List.of(
                    new Document("_id", 0).append("p", new Binary(new byte[5 * MIB])),
                    new Document("_id", 9).append("p", new Binary(new byte[5 * MIB])),
                    document,
                    new Document("_id", 10).append("p", new Binary(new byte[7 * MIB])));

            List<WriteCommand> commands = encode(documents, 0, CommandOptions.NONE, false);

            assertThat(commands).extracting(WriteCommand::size).containsExactly(3, 1);
            assertThat(commands.get(0).encodedByDriver()).isFalse();
            assertThat(commands.get(1).encodedByDriver()).isTrue();
            assertSameCommands(
                    document.keySet().toString(),
                    commands,
                    encode(documents, Long.MAX_VALUE, CommandOptions.NONE, false));
        }
    }

    @Test
    void aNameWithANulCharacter_isRefusedAsBefore_byTheGuardsEncoder() {
        List<Document> documents = List.of(new Document("_id", 1).append("a\u0000b", new Binary(new byte[20_000])));

        for (long treesFrom : new long[] {0, Long.MAX_VALUE}) {
            assertThatThrownBy(() -> encode(documents, treesFrom, CommandOptions.NONE, false))
                    .isInstanceOf(BsonSerializationException.class)
                    .hasMessageContaining("null character");
        }
    }

    @Test
    void bsonDocumentsWithWrappersOrScopes_areTheGuardsOwnBytes() {
        List<BsonDocument> documents = List.of(
                new BsonDocument("_id", new BsonInt32(1))
                        .append("w", new BsonDocumentWrapper<>(new Document("x", 1), new DocumentCodec())),
                new BsonDocument("_id", new BsonInt32(2))
                        .append("raw", new RawBsonDocument(new Document("y", 2), new DocumentCodec())),
                new BsonDocument("_id", new BsonInt32(3))
                        .append("js", new BsonJavaScriptWithScope("x", new BsonDocument("a", BsonBoolean.TRUE))));
        for (BsonDocument document : documents) {
            List<WriteCommand> commands = encodeBsonDocuments(List.of(document), 0, CommandOptions.NONE, false);

            assertThat(commands).singleElement().matches(command -> !command.encodedByDriver());
        }
    }

    @Test
    void aCallersBsonDocumentWithItsIdFirst_isSentAsItIs_andResendsEncodeTheSameBytes() {
        BsonDocument mine = new BsonDocument("_id", new BsonInt32(1)).append("p", new org.bson.BsonBinary(new byte[3]));
        WriteCommand command = encodeBsonDocuments(List.of(mine), 0, CommandOptions.NONE, false)
                .get(0);

        BsonDocument first = command.toCommand(5L, 2_000, null, null);
        BsonDocument resend = command.toCommand(5L, 2_000, null, null);

        assertThat(first.getArray("documents").get(0)).isSameAs(mine);
        assertThat(asTheDriverEncodes(resend)).isEqualTo(asTheDriverEncodes(first));
    }

    static void assertSameCommands(String what, List<WriteCommand> trees, List<WriteCommand> bytes) {
        assertThat(trees).as(what).hasSameSizeAs(bytes);
        for (int c = 0; c < trees.size(); c++) {
            WriteCommand tree = trees.get(c);
            WriteCommand own = bytes.get(c);
            assertThat(IntStream.range(0, tree.size()).map(tree::index).toArray())
                    .as(what + ", command " + c)
                    .isEqualTo(IntStream.range(0, own.size()).map(own::index).toArray());
            BsonDocument concern = BsonDocument.parse("{w: 'majority'}");
            BsonValue comment = new BsonString("mwg:1:1." + c);
            byte[] sentAsTrees = asTheDriverEncodes(tree.toCommand(7L + c, 2_000, concern, comment));
            byte[] sentAsBytes = asTheDriverEncodes(own.toCommand(7L + c, 2_000, concern, comment));
            assertThat(sentAsTrees)
                    .as(what + ", command " + c + firstDifference(sentAsTrees, sentAsBytes))
                    .isEqualTo(sentAsBytes);
            // A resend of the same copy encodes the same bytes.
            assertThat(asTheDriverEncodes(tree.toCommand(7L + c, 2_000, concern, comment)))
                    .as(what + ", resend of command " + c)
                    .isEqualTo(sentAsBytes);
        }
    }

    private static String firstDifference(byte[] trees, byte[] bytes) {
        int at = 0;
        while (at < Math.min(trees.length, bytes.length) && trees[at] == bytes[at]) {
            at++;
        }
        if (at == trees.length && at == bytes.length) {
            return "";
        }
        return ": first difference at byte " + at + " of " + trees.length + " / " + bytes.length + ", trees "
                + summary(trees) + ", bytes " + summary(bytes);
    }

    private static String summary(byte[] command) {
        String json = new RawBsonDocument(command).toJson();
        return json.replaceAll("\\{\"\\$binary\": \\{\"base64\": \"[^\"]{40}[^\"]*\"", "{binary...");
    }

    /** Random fields in a random order: _id absent, first or not first, of mixed numeric and other types. */
    private static Document randomDocument(Random random, int i, boolean large) {
        Document document = new Document();
        int fields = random.nextInt(6);
        int idAt = random.nextInt(5) == 0 ? -1 : random.nextInt(fields + 1);
        for (int f = 0; f <= fields; f++) {
            if (f == idAt) {
                document.append("_id", randomId(random, i));
            }
            if (f < fields) {
                document.append("f" + f, randomValue(random, 0, large));
            }
        }
        if (large) { // about 18 MiB a bulk: cut near 16 MiB
            document.append("big", new Binary(new byte[random.nextInt(3 * MIB)]));
        }
        return document;
    }

    private static Object randomId(Random random, int i) {
        return switch (random.nextInt(6)) {
            case 0 -> i;
            case 1 -> (long) i;
            case 2 -> i + 0.5;
            case 3 -> "id" + i;
            case 4 -> new ObjectId();
            default -> new Document("k", i).append("s", "é€" + i);
        };
    }

    static Object randomValue(Random random, int depth, boolean large) {
        int kind = random.nextInt(depth < 3 ? 14 : 12);
        return switch (kind) {
            case 0, 1 -> {
                int[] subtypes = {0, BINARY_SUBTYPE_OLD, 4, 0x80};
                int length = large && random.nextInt(4) == 0
                        ? random.nextInt(3 * MIB)
                        : random.nextInt(random.nextBoolean() ? 40_000 : 64);
                byte[] data = new byte[length];
                random.nextBytes(data);
                yield new Binary((byte) subtypes[random.nextInt(subtypes.length)], data);
            }
            case 2 -> random.nextInt();
            case 3 -> random.nextLong();
            case 4 -> random.nextBoolean() ? -0.0 : random.nextDouble();
            case 5 -> "s" + random.nextInt() + (random.nextBoolean() ? "é€ü\u0000x" : "");
            case 6 -> random.nextBoolean();
            case 7 -> null;
            case 8 -> new Date(random.nextLong() >> 20);
            case 9 -> new Decimal128(new BigDecimal(random.nextInt() + ".25"));
            case 10 -> new ObjectId();
            case 11 -> random.nextBoolean() ? Double.NaN : (long) random.nextInt();
            case 12 -> {
                Document nested = new Document();
                for (int f = random.nextInt(4); f > 0; f--) {
                    nested.append(random.nextBoolean() ? "_id" : "n" + f, randomValue(random, depth + 1, false));
                }
                yield nested;
            }
            default -> {
                List<Object> list = new ArrayList<>();
                for (int e = random.nextInt(4); e > 0; e--) {
                    list.add(randomValue(random, depth + 1, false));
                }
                yield list;
            }
        };
    }

    private static Document deep(int levels) {
        Document document = new Document("_id", 3);
        Document inner = document;
        for (int level = 2; level <= levels; level++) {
            Document next = new Document();
            inner.append("d", next);
            inner = next;
        }
        return document;
    }

    /** {@code {_id: id, p: <binary>}} of exactly {@code bytes} encoded bytes. */
    private static Document binaryOfSize(int bytes, int id) {
        int shell = encodedSize(new Document("_id", id).append("p", new Binary(new byte[0])));
        return new Document("_id", id).append("p", new Binary(new byte[bytes - shell]));
    }

    private static int encodedSize(Document document) {
        return new RawBsonDocument(document, new DocumentCodec())
                .getByteBuffer()
                .remaining();
    }

    private static List<WriteCommand> encode(
            List<Document> documents, long treesFrom, CommandOptions options, boolean ordered) {
        WriteCommandEncoder<Document> encoder = new WriteCommandEncoder<>("c", Document.class, REGISTRY, treesFrom);
        return encoder.encode(plan(documents, Document.class), indices(documents.size()), ordered, options);
    }

    /** The same documents as {@code BsonDocument}s, in the same field order. */
    private static List<BsonDocument> toBson(List<Document> documents) {
        List<BsonDocument> bson = new ArrayList<>();
        for (Document document : documents) {
            bson.add(asBson(document));
        }
        return bson;
    }

    /** The document as a {@code BsonDocument}, in the same field order. */
    static BsonDocument asBson(Document document) {
        BsonDocument copy = new BsonDocument();
        new DocumentCodec()
                .encode(
                        new BsonDocumentWriter(copy),
                        document,
                        EncoderContext.builder().build());
        return copy;
    }

    private static List<WriteCommand> encodeBsonDocuments(
            List<BsonDocument> documents, long treesFrom, CommandOptions options, boolean ordered) {
        WriteCommandEncoder<BsonDocument> encoder =
                new WriteCommandEncoder<>("c", BsonDocument.class, REGISTRY, treesFrom);
        return encoder.encode(plan(documents, BsonDocument.class), indices(documents.size()), ordered, options);
    }

    private static <T> PlannedBulk plan(List<T> documents, Class<T> documentClass) {
        List<WriteModel<T>> models = new ArrayList<>();
        documents.forEach(document -> models.add(new InsertOneModel<>(document)));
        models.add(new DeleteOneModel<>(Filters.eq("_id", -1))); // another kind: the inserts' command ends before it
        return BulkPlanner.of(documentClass, REGISTRY).plan(models, PlanOptions.ordered());
    }

    private static List<Integer> indices(int n) {
        return IntStream.range(0, n).boxed().toList();
    }
}
