package io.github.mongowriteguard.internal.plan;

import static org.assertj.core.api.Assertions.assertThat;

import com.mongodb.MongoClientSettings;
import java.math.BigDecimal;
import java.util.ArrayList;
import java.util.Date;
import java.util.List;
import java.util.Random;
import org.bson.BsonBinaryWriter;
import org.bson.BsonDocument;
import org.bson.BsonType;
import org.bson.Document;
import org.bson.codecs.DocumentCodec;
import org.bson.codecs.EncoderContext;
import org.bson.codecs.StringCodec;
import org.bson.codecs.configuration.CodecRegistries;
import org.bson.codecs.configuration.CodecRegistry;
import org.bson.io.BasicOutputBuffer;
import org.bson.types.Binary;
import org.bson.types.Decimal128;
import org.bson.types.ObjectId;
import org.junit.jupiter.api.Test;

/** The shortcuts for plain {@code Document}s give exactly what the codec gives, or step aside. */
class DocumentShortcutsTest {

    private static final CodecRegistry REGISTRY = MongoClientSettings.getDefaultCodecRegistry();
    private final DocumentShortcuts shortcuts = new DocumentShortcuts(REGISTRY);

    @Test
    void measuredSize_equalsEncodedSize_forRandomDocuments() {
        Random random = new Random(7);
        for (int run = 0; run < 2_000; run++) {
            Document document = randomDocument(random, 0);
            switch (random.nextInt(4)) {
                case 0:
                    document.put("_id", random.nextInt());
                    break;
                case 1:
                    document.put("_id", new ObjectId());
                    break;
                case 2:
                    document.put("_id", randomDocument(random, 1)); // a compound _id, e.g. {productId, storeId}
                    break;
                default:
                    break;
            }

            MeasuredDocument measured = shortcuts.measure(document);

            assertThat(measured).as(document.toJson()).isNotNull();
            assertThat(measured.size).as(document.toJson()).isEqualTo(encodedSize(document));
            assertThat(measured.id())
                    .isEqualTo(
                            document.containsKey("_id")
                                    ? document.toBsonDocument(Document.class, REGISTRY)
                                            .get("_id")
                                    : null);
        }
    }

    @Test
    void filterOfScalars_equalsTheEncodedFilter() {
        Document filter = new Document("_id", 5L)
                .append("region", "eu")
                .append("active", true)
                .append("n", null)
                .append("price", new Decimal128(new BigDecimal("1.50")))
                .append("ratio", 0.5)
                .append("ref", new ObjectId());

        assertThat(shortcuts.filter(filter)).isEqualTo(filter.toBsonDocument(Document.class, REGISTRY));
    }

    @Test
    void filter_equalsTheEncodedFilter_forRandomDocuments() {
        Random random = new Random(11);
        for (int run = 0; run < 2_000; run++) {
            Document filter = randomDocument(random, 0);

            assertThat(shortcuts.filter(filter))
                    .as(filter.toJson())
                    .isEqualTo(filter.toBsonDocument(Document.class, REGISTRY));
        }
    }

    @Test
    void unknownTypes_areLeftToTheCodec() {
        assertThat(shortcuts.filter(new Document("_id", new Document("$in", List.of(1, new byte[] {1})))))
                .isNull();
        assertThat(shortcuts.filter(new Document("_id", java.util.UUID.randomUUID())))
                .isNull();
        assertThat(shortcuts.measure(new Document("_id", new Document("a", new byte[] {1}))))
                .isNull();
        assertThat(shortcuts.measure(new Document("v", new byte[] {1}))).isNull();
        assertThat(shortcuts.measure(new Document("emoji", "\uD83D\uDE00"))).isNull();
        assertThat(shortcuts.measure(BsonDocument.parse("{a: 1}"))).isNull();
    }

    @Test
    void registryWithOtherCodecs_disablesTheShortcuts() {
        CodecRegistry stringsAsObjectIds = CodecRegistries.fromRegistries(
                CodecRegistries.fromCodecs(new StringCodec().withRepresentation(BsonType.OBJECT_ID)), REGISTRY);
        DocumentShortcuts disabled = new DocumentShortcuts(stringsAsObjectIds);

        assertThat(disabled.filter(new Document("_id", "5f0000000000000000000000")))
                .isNull();
        assertThat(disabled.measure(new Document("_id", 1))).isNull();
        assertThat(disabled.updateFields(new Document("$set", new Document("a", 1))))
                .isNull();
    }

    @Test
    void documentToInsert_isWhatTheCodecWritesForACollectibleDocument_idFirst() {
        Random random = new Random(11);
        for (int run = 0; run < 2_000; run++) {
            Document document = randomDocument(random, 0);
            if (random.nextBoolean()) {
                document.put("_id", random.nextBoolean() ? random.nextLong() : randomDocument(random, 1));
            }

            BsonDocument tree = shortcuts.documentToInsert(document, NestingDepth.DRIVER_MAX_DEPTH);

            BsonDocument written = new BsonDocument();
            new DocumentCodec(REGISTRY)
                    .encode(
                            new org.bson.BsonDocumentWriter(written),
                            document,
                            EncoderContext.builder()
                                    .isEncodingCollectibleDocument(true)
                                    .build());
            assertThat(tree).as(document.toJson()).isEqualTo(written);
            assertThat(List.copyOf(tree.keySet())).isEqualTo(List.copyOf(written.keySet()));
        }
    }

    @Test
    void documentToInsert_stepsAsideForOtherTypesAndDeeperNesting() {
        assertThat(shortcuts.documentToInsert(new Document("s", (short) 1), 10)).isNull();
        assertThat(shortcuts.documentToInsert(new Document("d", new Document("e", 1)), 1))
                .isNull();
        assertThat(shortcuts.documentToInsert(new BsonDocument(), 10)).isNull();
    }

    private static long encodedSize(Document document) {
        BasicOutputBuffer buffer = new BasicOutputBuffer();
        try (BsonBinaryWriter writer = new BsonBinaryWriter(buffer)) {
            new DocumentCodec(REGISTRY)
                    .encode(writer, document, EncoderContext.builder().build());
        }
        return buffer.getPosition();
    }

    private static Document randomDocument(Random random, int depth) {
        Document document = new Document();
        int fields = random.nextInt(6);
        for (int i = 0; i < fields; i++) {
            document.put(randomText(random, 1 + random.nextInt(8)), randomValue(random, depth));
        }
        return document;
    }

    private static Object randomValue(Random random, int depth) {
        switch (random.nextInt(depth < 3 ? 12 : 10)) {
            case 0:
                return null;
            case 1:
                return random.nextInt();
            case 2:
                return random.nextLong();
            case 3:
                return random.nextDouble();
            case 4:
                return random.nextBoolean();
            case 5:
                return new ObjectId();
            case 6:
                return new Decimal128(BigDecimal.valueOf(random.nextInt(), random.nextInt(5)));
            case 7:
                if (random.nextBoolean()) {
                    return new Date(random.nextInt(1_000_000));
                }
                // subtypes 0 (generic), 2 (old binary: its length written twice), 4 (UUID), 0x80 (user defined)
                byte[] data = new byte[random.nextInt(40)];
                random.nextBytes(data);
                return new Binary(new byte[] {0, 2, 4, (byte) 0x80}[random.nextInt(4)], data);
            case 8:
            case 9:
                return randomText(random, random.nextInt(40));
            case 10:
                return randomDocument(random, depth + 1);
            default: {
                List<Object> list = new ArrayList<>();
                int size = random.nextInt(15);
                for (int i = 0; i < size; i++) {
                    list.add(randomValue(random, depth + 1));
                }
                return list;
            }
        }
    }

    /** ASCII, Latin, Greek and CJK characters: 1, 2 and 3 bytes in UTF-8. */
    private static String randomText(Random random, int length) {
        String alphabet = "abcXYZ019_éüßαβγ漢字";
        StringBuilder text = new StringBuilder(length);
        for (int i = 0; i < length; i++) {
            text.append(alphabet.charAt(random.nextInt(alphabet.length())));
        }
        return text.toString();
    }
}
