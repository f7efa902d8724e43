package io.github.mongowriteguard.internal.command;

import static org.assertj.core.api.Assertions.assertThat;

import com.mongodb.MongoClientSettings;
import com.mongodb.client.model.Collation;
import com.mongodb.client.model.DeleteManyModel;
import com.mongodb.client.model.DeleteOneModel;
import com.mongodb.client.model.Filters;
import com.mongodb.client.model.InsertOneModel;
import com.mongodb.client.model.ReplaceOneModel;
import com.mongodb.client.model.ReplaceOptions;
import com.mongodb.client.model.UpdateManyModel;
import com.mongodb.client.model.UpdateOneModel;
import com.mongodb.client.model.UpdateOptions;
import com.mongodb.client.model.Updates;
import com.mongodb.client.model.WriteModel;
import io.github.mongowriteguard.internal.plan.BulkPlanner;
import io.github.mongowriteguard.internal.plan.PlanOptions;
import io.github.mongowriteguard.internal.plan.PlannedBulk;
import java.math.BigDecimal;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Date;
import java.util.List;
import java.util.Random;
import org.bson.BsonArray;
import org.bson.BsonBinary;
import org.bson.BsonBinaryWriter;
import org.bson.BsonBinaryWriterSettings;
import org.bson.BsonBoolean;
import org.bson.BsonDateTime;
import org.bson.BsonDecimal128;
import org.bson.BsonDocument;
import org.bson.BsonDouble;
import org.bson.BsonInt32;
import org.bson.BsonInt64;
import org.bson.BsonNull;
import org.bson.BsonObjectId;
import org.bson.BsonString;
import org.bson.BsonValue;
import org.bson.BsonWriterSettings;
import org.bson.Document;
import org.bson.codecs.configuration.CodecRegistry;
import org.bson.conversions.Bson;
import org.bson.types.Binary;
import org.bson.types.Decimal128;
import org.bson.types.ObjectId;
import org.junit.jupiter.api.Test;

/**
 * The statements {@link PlainStatementBytes} writes by hand are byte for byte the ones {@link StatementWriter} writes
 * through a {@code BsonBinaryWriter} and the driver's codecs; the statements it does not write are left to the writer.
 */
class PlainStatementBytesTest {
    private static final CodecRegistry REGISTRY = MongoClientSettings.getDefaultCodecRegistry();

    @Test
    void usualStatementsOfPlainValuesAreTheWritersBytes() {
        Random random = new Random(28);
        BulkPlanner<Document> planner = BulkPlanner.of(Document.class, REGISTRY);
        StatementWriter<Document> statements = new StatementWriter<>(Document.class, REGISTRY);
        int plain = 0;
        for (int bulk = 0; bulk < 200; bulk++) {
            List<WriteModel<Document>> models = new ArrayList<>();
            for (int i = 0; i < 20; i++) {
                models.add(usualWrite(random, i));
            }
            plain += writtenByHandAsTheWriter(planner, statements, models);
        }
        assertThat(plain).isEqualTo(4_000);
    }

    @Test
    void anIdAnywhereInAReplacementOrUpdate_staysWhereTheDriverWritesIt() {
        BulkPlanner<Document> planner = BulkPlanner.of(Document.class, REGISTRY);
        StatementWriter<Document> statements = new StatementWriter<>(Document.class, REGISTRY);
        List<WriteModel<Document>> models = List.of(
                new ReplaceOneModel<>(Filters.eq("_id", 1), new Document("n", 1).append("_id", 1)),
                new ReplaceOneModel<>(
                        Filters.eq("_id", 2),
                        new Document("n", 2)
                                .append("inner", new Document("x", 1).append("_id", 9))
                                .append("_id", 2)),
                new ReplaceOneModel<>(Filters.eq("_id", 3), new Document("_id", 3).append("n", 3)),
                new UpdateOneModel<>(
                        Filters.eq("_id", 4), new Document("$set", new Document("n", 4).append("_id", 4))));
        // the driver keeps a replacement's field order (it is not encoded as a collectible document)
        assertThat(writtenByHandAsTheWriter(planner, statements, models)).isEqualTo(models.size());
    }

    /** Inserts go as trees, or through the codec writer where a tree cannot be used: never written by hand. */
    @Test
    void documentsToInsert_areLeftToTheTreesOrTheWriter() {
        Random random = new Random(2028);
        StatementWriter<Document> statements = new StatementWriter<>(Document.class, REGISTRY);
        List<WriteModel<Document>> models = new ArrayList<>();
        for (int i = 0; i < 20; i++) {
            models.add(new InsertOneModel<>(plainDocument(random, 0).append("_id", i)));
        }
        PlannedBulk plan = BulkPlanner.of(Document.class, REGISTRY).plan(models, PlanOptions.unordered());
        for (int index = 0; index < models.size(); index++) {
            CommandBuffer buffer = new CommandBuffer(16);
            assertThat(statements.writePlain(buffer, index, plan)).isFalse();
            assertThat(buffer.getPosition()).isZero();
        }
    }

    @Test
    void otherStatementsAreLeftToTheWriterWithTheBufferAsItWas() {
        BsonDocument raw = new BsonDocument("_id", new BsonInt32(1));
        List<WriteModel<Document>> models = List.of(
                new UpdateOneModel<>(
                        Filters.eq("_id", 1), Updates.inc("n", 1), new UpdateOptions().hint(new Document("n", 1))),
                new UpdateOneModel<>(Filters.eq("_id", 2), List.of(new Document("$set", new Document("p", 1)))),
                new ReplaceOneModel<>(Filters.eq("_id", 3), new Document("tags", java.util.Set.of("a", "b"))),
                new ReplaceOneModel<>(Filters.eq("_id", 4), new Document("t", new org.bson.BsonTimestamp(1, 2))),
                new DeleteOneModel<>(
                        Filters.eq("_id", 5), new com.mongodb.client.model.DeleteOptions().hintString("x")),
                new DeleteManyModel<>(
                        Filters.gt("n", 1),
                        new com.mongodb.client.model.DeleteOptions()
                                .collation(Collation.builder().locale("en").build())),
                new ReplaceOneModel<>(Filters.eq("_id", 7), new Document("n", 1)),
                new UpdateOneModel<>(Filters.eq("_id", 8), new Document("$inc", new Document("n", 1.5f))),
                new ReplaceOneModel<>(new Document("_id", 9).append("r", raw), new Document("n", 1)));
        PlannedBulk plan = BulkPlanner.of(Document.class, REGISTRY).plan(models, PlanOptions.unordered());
        StatementWriter<Document> statements = new StatementWriter<>(Document.class, REGISTRY);
        for (int index = 0; index < models.size(); index++) {
            CommandBuffer buffer = new CommandBuffer(16);
            buffer.writeInt32(7);
            boolean byHand = statements.writePlain(buffer, index, plan);
            assertThat(byHand).as("write %d", index).isEqualTo(index == 6);
            if (!byHand) {
                assertThat(buffer.getPosition()).as("write %d", index).isEqualTo(4);
            }
        }
    }

    @Test
    void aNameWithANullCharacterIsRefusedAsTheWriterRefusesIt() {
        List<WriteModel<Document>> models =
                List.of(new ReplaceOneModel<>(Filters.eq("_id", 1), new Document("a\u0000b", 1)));
        PlannedBulk plan = BulkPlanner.of(Document.class, REGISTRY).plan(models, PlanOptions.unordered());
        StatementWriter<Document> statements = new StatementWriter<>(Document.class, REGISTRY);
        Throwable byHand = catchThrowable(() -> statements.writePlain(new CommandBuffer(16), 0, plan));
        Throwable byWriter = catchThrowable(() -> writersBytes(statements, 0, plan));
        assertThat(byHand).isNotNull().hasSameClassAs(byWriter).hasMessage(byWriter.getMessage());
    }

    private static Throwable catchThrowable(Runnable action) {
        try {
            action.run();
            return null;
        } catch (RuntimeException e) {
            return e;
        }
    }

    /** An update, replace or delete without collation, hint, array filters or sort, of plain values. */
    private static WriteModel<Document> usualWrite(Random random, int i) {
        Object id = random.nextBoolean() ? (Object) i : new Document("k", i).append("s", "x" + i);
        Bson filter = switch (random.nextInt(3)) {
            case 0 -> Filters.eq("_id", id);
            case 1 -> new Document("_id", id).append("shard", plainValue(random, 1));
            default -> Filters.and(Filters.eq("_id", id), Filters.gt("n", random.nextInt(9)));
        };
        return switch (random.nextInt(7)) {
            case 0 ->
                new ReplaceOneModel<>(
                        filter, plainDocument(random, 0), new ReplaceOptions().upsert(random.nextBoolean()));
            case 1 ->
                new UpdateOneModel<>(
                        filter,
                        Updates.combine(Updates.set("v", plainValue(random, 1)), Updates.inc("c", 1)),
                        new UpdateOptions().upsert(random.nextBoolean()));
            case 2 -> new UpdateOneModel<>(filter, new Document("$set", plainDocument(random, 1)));
            case 3 -> new UpdateManyModel<>(filter, new BsonDocument("$set", treeDocument(random, 1)));
            case 4 -> new UpdateManyModel<>(Filters.gt("n", i), new Document("$inc", new Document("n", 1)));
            case 5 -> new DeleteOneModel<>(filter);
            default -> new DeleteManyModel<>(random.nextBoolean() ? filter : Filters.lt("n", i));
        };
    }

    private static Document plainDocument(Random random, int depth) {
        Document document = new Document();
        int fields = random.nextInt(5);
        for (int f = 0; f < fields; f++) {
            document.append(name(random, f), plainValue(random, depth + 1));
        }
        return document;
    }

    private static Object plainValue(Random random, int depth) {
        int kinds = depth > 3 ? 11 : 13;
        return switch (random.nextInt(kinds)) {
            case 0 -> null;
            case 1 -> random.nextInt();
            case 2 -> random.nextLong();
            case 3 -> random.nextDouble() * (random.nextBoolean() ? -1 : 1);
            case 4 -> random.nextBoolean();
            case 5 -> text(random);
            case 6 -> new ObjectId();
            case 7 -> new Date(random.nextLong() >> 20);
            case 8 -> Double.NaN;
            case 9 -> new Decimal128(new BigDecimal(random.nextLong()).movePointLeft(random.nextInt(20)));
            case 10 -> new Binary(BINARY_SUBTYPES[random.nextInt(BINARY_SUBTYPES.length)], bytes(random));
            case 11 -> plainDocument(random, depth);
            default -> {
                ArrayList<Object> list = new ArrayList<>();
                for (int e = random.nextInt(13); e > 0; e--) {
                    list.add(plainValue(random, depth + 1));
                }
                yield random.nextBoolean() ? list : Arrays.asList(list.toArray()); // the JDK's other lists too
            }
        };
    }

    /** Generic, the old binary subtype (which repeats the length inside) and a user-defined one. */
    private static final byte[] BINARY_SUBTYPES = {0, 2, (byte) 0x80};

    private static byte[] bytes(Random random) {
        byte[] bytes = new byte[random.nextInt(9)];
        random.nextBytes(bytes);
        return bytes;
    }

    private static BsonDocument treeDocument(Random random, int depth) {
        BsonDocument document = new BsonDocument();
        int fields = random.nextInt(5);
        for (int f = 0; f < fields; f++) {
            document.append(name(random, f), treeValue(random, depth + 1));
        }
        return document;
    }

    private static BsonValue treeValue(Random random, int depth) {
        int kinds = depth > 3 ? 10 : 12;
        return switch (random.nextInt(kinds)) {
            case 0 -> BsonNull.VALUE;
            case 1 -> new BsonInt32(random.nextInt());
            case 2 -> new BsonInt64(random.nextLong());
            case 3 -> new BsonDouble(random.nextDouble());
            case 4 -> BsonBoolean.valueOf(random.nextBoolean());
            case 5 -> new BsonString(text(random));
            case 6 -> new BsonObjectId(new ObjectId());
            case 7 -> new BsonDateTime(random.nextLong() >> 20);
            case 8 -> new BsonDecimal128(new Decimal128(random.nextLong()));
            case 9 -> new BsonBinary(BINARY_SUBTYPES[random.nextInt(BINARY_SUBTYPES.length)], bytes(random));
            case 10 -> treeDocument(random, depth);
            default -> {
                BsonArray array = new BsonArray();
                for (int e = random.nextInt(13); e > 0; e--) {
                    array.add(treeValue(random, depth + 1));
                }
                yield array;
            }
        };
    }

    /** Names and strings of ASCII, accented letters, other scripts and a character outside the BMP. */
    private static String text(Random random) {
        String[] parts = {"a", "Z9", "\u00e9", "\u4e2d\u6587", "\ud83d\ude00", " ", "$x", "."};
        StringBuilder text = new StringBuilder();
        for (int p = random.nextInt(6); p > 0; p--) {
            text.append(parts[random.nextInt(parts.length)]);
        }
        return text.toString();
    }

    private static String name(Random random, int field) {
        return "f" + field + text(random).replace("$", "");
    }

    /** Plans {@code models} and checks that each is written by hand, with the writer's bytes; the count written. */
    private static int writtenByHandAsTheWriter(
            BulkPlanner<Document> planner, StatementWriter<Document> statements, List<WriteModel<Document>> models) {
        PlannedBulk plan = planner.plan(models, PlanOptions.unordered());
        for (int index = 0; index < models.size(); index++) {
            CommandBuffer byHand = new CommandBuffer(16);
            assertThat(statements.writePlain(byHand, index, plan))
                    .as("write %d: %s", index, models.get(index))
                    .isTrue();
            assertThat(bytes(byHand))
                    .as("write %d: %s", index, models.get(index))
                    .isEqualTo(writersBytes(statements, index, plan));
        }
        return models.size();
    }

    private static byte[] writersBytes(StatementWriter<Document> statements, int index, PlannedBulk plan) {
        CommandBuffer buffer = new CommandBuffer(16);
        try (BsonBinaryWriter writer = new BsonBinaryWriter(
                new BsonWriterSettings(EncodedCommandWriter.DRIVER_MAX_DEPTH),
                new BsonBinaryWriterSettings(),
                buffer)) {
            statements.write(writer, index, plan);
        }
        return bytes(buffer);
    }

    private static byte[] bytes(CommandBuffer buffer) {
        return Arrays.copyOf(buffer.array(), buffer.getPosition());
    }
}
