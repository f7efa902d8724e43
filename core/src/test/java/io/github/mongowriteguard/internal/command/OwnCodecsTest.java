package io.github.mongowriteguard.internal.command;

import static org.assertj.core.api.Assertions.assertThat;

import com.mongodb.MongoClientSettings;
import com.mongodb.client.model.DeleteOneModel;
import com.mongodb.client.model.Filters;
import com.mongodb.client.model.InsertOneModel;
import com.mongodb.client.model.ReplaceOneModel;
import com.mongodb.client.model.UpdateOneModel;
import com.mongodb.client.model.WriteModel;
import io.github.mongowriteguard.internal.plan.BulkPlanner;
import io.github.mongowriteguard.internal.plan.PlanOptions;
import java.util.ArrayList;
import java.util.List;
import java.util.stream.IntStream;
import org.bson.BsonDocument;
import org.bson.BsonDocumentWriter;
import org.bson.BsonReader;
import org.bson.BsonType;
import org.bson.BsonValue;
import org.bson.BsonWriter;
import org.bson.Document;
import org.bson.codecs.Codec;
import org.bson.codecs.DecoderContext;
import org.bson.codecs.EncoderContext;
import org.bson.codecs.IntegerCodec;
import org.bson.codecs.configuration.CodecRegistries;
import org.bson.codecs.configuration.CodecRegistry;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * A collection whose registry has its own codec for a plain Java type sends every statement through the codecs, as the
 * driver does: the encoder's shortcuts for plain values (hand-written bytes, trees) apply only to the driver's own
 * codecs, even when the application's codec extends one of them.
 */
class OwnCodecsTest {
    /** Writes every {@code Integer} as an int64, as an application's codec might. */
    static final class WideIntegerCodec extends IntegerCodec {
        @Override
        public void encode(BsonWriter writer, Integer value, EncoderContext encoderContext) {
            writer.writeInt64(value.longValue());
        }
    }

    private static final CodecRegistry OWN_INTEGERS = CodecRegistries.fromRegistries(
            CodecRegistries.fromCodecs(new WideIntegerCodec()), MongoClientSettings.getDefaultCodecRegistry());

    /** One statement shape per run: insert (small and large), replacement (small and large), update, delete. */
    @ParameterizedTest
    @ValueSource(strings = {"insert", "large insert", "replace", "large replace", "update", "delete"})
    void aRegistrysOwnCodecForAPlainType_encodesEveryStatement(String shape) {
        List<WriteModel<Document>> models = new ArrayList<>();
        for (int i = 0; i < 3; i++) {
            Document document = new Document("_id", "k" + i).append("n", i + 7);
            if (shape.startsWith("large")) {
                document.append("pad", "x".repeat(4096)); // past the size from which trees are sent
            }
            models.add(
                    switch (shape) {
                        case "insert", "large insert" -> new InsertOneModel<>(document);
                        case "replace", "large replace" -> new ReplaceOneModel<>(Filters.eq("_id", "k" + i), document);
                        case "update" ->
                            new UpdateOneModel<>(
                                    new Document("_id", "k" + i).append("n", i + 7),
                                    new Document("$set", new Document("n", i + 8)));
                        default -> new DeleteOneModel<>(new Document("_id", "k" + i).append("n", i + 7));
                    });
        }
        List<BsonType> integers = sentTypesOfN(OWN_INTEGERS, models);
        assertThat(integers).as("the type of every integer sent").isNotEmpty().containsOnly(BsonType.INT64);
    }

    /** The types of the values named {@code n} in the statements the guard's encoder sends for {@code models}. */
    private static List<BsonType> sentTypesOfN(CodecRegistry registry, List<WriteModel<Document>> models) {
        List<WriteCommand> commands = new WriteCommandEncoder<>("c", Document.class, registry)
                .encode(
                        BulkPlanner.of(Document.class, registry).plan(models, PlanOptions.unordered()),
                        IntStream.range(0, models.size()).boxed().toList(),
                        false,
                        CommandOptions.NONE);
        List<BsonType> types = new ArrayList<>();
        for (WriteCommand command : commands) {
            BsonDocument sent = command.toCommand(1L, 2_000, null, null);
            for (String array : List.of("documents", "updates", "deletes")) {
                if (sent.containsKey(array)) {
                    sent.getArray(array).forEach(statement -> collect(statement, types));
                }
            }
        }
        return types;
    }

    /** The types of the values named {@code n}, anywhere in {@code value}. */
    private static void collect(BsonValue value, List<BsonType> types) {
        if (value.isDocument()) {
            value.asDocument().forEach((name, field) -> {
                if (name.equals("n")) {
                    types.add(field.getBsonType());
                } else {
                    collect(field, types);
                }
            });
        } else if (value.isArray()) {
            value.asArray().forEach(element -> collect(element, types));
        }
    }

    /** A list type of the application's own, which its registry writes as one string. */
    static final class Tags extends ArrayList<String> {
        Tags(List<String> tags) {
            super(tags);
        }
    }

    private static final CodecRegistry OWN_LISTS = CodecRegistries.fromRegistries(
            CodecRegistries.fromCodecs(new Codec<Tags>() {
                @Override
                public void encode(BsonWriter writer, Tags value, EncoderContext context) {
                    writer.writeString(String.join(",", value));
                }

                @Override
                public Tags decode(BsonReader reader, DecoderContext context) {
                    return new Tags(List.of(reader.readString().split(",")));
                }

                @Override
                public Class<Tags> getEncoderClass() {
                    return Tags.class;
                }
            }),
            MongoClientSettings.getDefaultCodecRegistry());

    @ParameterizedTest
    @ValueSource(strings = {"insert", "replace", "update", "delete"})
    void aRegistrysOwnCodecForAListType_encodesEveryStatement(String shape) {
        Tags tags = new Tags(List.of("a", "b"));
        Document document = new Document("_id", "k").append("n", tags);
        BsonDocument driversOwn = new BsonDocument();
        OWN_LISTS
                .get(Document.class)
                .encode(
                        new BsonDocumentWriter(driversOwn),
                        document,
                        EncoderContext.builder().build());
        assertThat(driversOwn.get("n").getBsonType())
                .as("the driver's DocumentCodec uses the list's own codec")
                .isEqualTo(BsonType.STRING);
        WriteModel<Document> model = switch (shape) {
            case "insert" -> new InsertOneModel<>(document);
            case "replace" -> new ReplaceOneModel<>(new Document("_id", "k").append("n", tags), document);
            case "update" ->
                new UpdateOneModel<>(
                        new Document("_id", "k").append("n", tags), new Document("$set", new Document("n", tags)));
            default -> new DeleteOneModel<>(new Document("_id", "k").append("n", tags));
        };
        List<BsonType> types = sentTypesOfN(OWN_LISTS, List.of(model));
        assertThat(types).as("the type of every list sent").isNotEmpty().containsOnly(BsonType.STRING);
    }
}
