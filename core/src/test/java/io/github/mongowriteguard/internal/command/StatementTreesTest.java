package io.github.mongowriteguard.internal.command;

import static io.github.mongowriteguard.internal.command.TreeCommandsTest.asBson;
import static org.assertj.core.api.Assertions.assertThat;

import com.mongodb.MongoClientSettings;
import com.mongodb.client.model.Collation;
import com.mongodb.client.model.DeleteOneModel;
import com.mongodb.client.model.Filters;
import com.mongodb.client.model.Indexes;
import com.mongodb.client.model.InsertOneModel;
import com.mongodb.client.model.ReplaceOneModel;
import com.mongodb.client.model.ReplaceOptions;
import com.mongodb.client.model.Sorts;
import com.mongodb.client.model.UpdateOneModel;
import com.mongodb.client.model.Updates;
import com.mongodb.client.model.WriteModel;
import io.github.mongowriteguard.internal.plan.BulkPlanner;
import io.github.mongowriteguard.internal.plan.PlanOptions;
import io.github.mongowriteguard.internal.plan.PlannedBulk;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Random;
import java.util.Set;
import java.util.stream.IntStream;
import org.bson.BsonBoolean;
import org.bson.BsonDocument;
import org.bson.BsonInt32;
import org.bson.BsonString;
import org.bson.Document;
import org.bson.RawBsonDocument;
import org.bson.codecs.BsonDocumentCodec;
import org.bson.codecs.configuration.CodecRegistry;
import org.bson.conversions.Bson;
import org.bson.types.Binary;
import org.junit.jupiter.api.Test;

/**
 * Replacements sent as statement trees ({@code {q, u, upsert, collation, hint, sort}}, the replacement in its own field
 * order) must give the server the same command as the guard's own bytes, byte for byte, cut at the same statements:
 * random bulks mixing them with inserts, updates and deletes, encoded both ways from one plan and compared as the driver
 * encodes {@code runCommand}'s command ({@link TreeCommandsTest#assertSameCommands}).
 */
class StatementTreesTest {
    private static final CodecRegistry REGISTRY = MongoClientSettings.getDefaultCodecRegistry();
    private static final int MIB = 1024 * 1024;

    @Test
    void randomBulksOfReplacements_sentAsTrees_areByteForByteTheGuardsOwnBytes_cutAtTheSameStatements() {
        int treeCommands = 0;
        int unsureCommands = 0;
        int cutBulks = 0;
        for (int seed = 0; seed < 120; seed++) {
            Random random = new Random(seed);
            boolean large = seed % 6 == 0;
            boolean asBson = seed % 2 == 1;
            Set<Integer> unsure = new HashSet<>();
            Set<Integer> unsureAsDocuments = new HashSet<>();
            List<WriteModel<Document>> models = new ArrayList<>();
            int count = large ? 8 + random.nextInt(16) : 1 + random.nextInt(12);
            for (int i = 0; i < count; i++) {
                models.add(randomWrite(random, i, large, unsure, unsureAsDocuments));
            }
            if (!asBson) {
                unsure.addAll(unsureAsDocuments);
            }
            CommandOptions options = random.nextBoolean()
                    ? CommandOptions.NONE
                    : new CommandOptions(random.nextBoolean(), new BsonString("c"), BsonDocument.parse("{limit: 10}"));
            boolean ordered = random.nextBoolean();
            boolean alone = random.nextInt(4) == 0;

            List<WriteCommand> trees = asBson
                    ? encode(toBson(models), BsonDocument.class, 0, ordered, options, alone)
                    : encode(models, Document.class, 0, ordered, options, alone);
            List<WriteCommand> bytes = asBson
                    ? encode(toBson(models), BsonDocument.class, Long.MAX_VALUE, ordered, options, alone)
                    : encode(models, Document.class, Long.MAX_VALUE, ordered, options, alone);

            assertThat(bytes).noneMatch(WriteCommand::encodedByDriver);
            TreeCommandsTest.assertSameCommands("seed " + seed, trees, bytes);
            int replacementCommands = 0;
            boolean anyTree = false;
            for (WriteCommand command : trees) {
                if (!(models.get(command.index(0)) instanceof ReplaceOneModel)) {
                    continue;
                }
                replacementCommands++;
                anyTree |= command.encodedByDriver();
                boolean sure = IntStream.range(0, command.size()).noneMatch(p -> unsure.contains(command.index(p)));
                assertThat(command.encodedByDriver())
                        .as("seed " + seed + ": replacements " + command + " as trees")
                        .isEqualTo(sure);
                treeCommands += sure ? 1 : 0;
                unsureCommands += sure ? 0 : 1;
            }
            // Unordered and not alone, a bulk's replacements are one command unless cut near 16 MiB.
            cutBulks += large && !ordered && !alone && replacementCommands > 1 && anyTree ? 1 : 0;
        }
        assertThat(treeCommands).as("replacement commands sent as trees").isGreaterThan(50);
        assertThat(unsureCommands)
                .as("replacement commands left to the guard's bytes")
                .isGreaterThan(10);
        assertThat(cutBulks)
                .as("bulks whose replacements were cut near 16 MiB, as trees")
                .isPositive();
    }

    @Test
    void replacementsAtExactlyTheCut_andOneByteOver_areCutAtTheSameStatement() {
        ReplaceOptions upsert = new ReplaceOptions().upsert(true);
        Document secondReplacement = new Document("p", new Binary(new byte[8])).append("_id", 1);
        int second = statementSize(1, secondReplacement, true);
        int firstBytes = WriteCommandEncoder.MAX_STATEMENT_BYTES - 3 - (3 + second);
        int shell = statementSize(0, new Document("_id", 0).append("p", new Binary(new byte[0])), true);
        for (int extra = 0; extra <= 1; extra++) {
            List<WriteModel<Document>> models = List.of(
                    new ReplaceOneModel<>(
                            Filters.eq("_id", 0),
                            new Document("_id", 0).append("p", new Binary(new byte[firstBytes + extra - shell])),
                            upsert),
                    new ReplaceOneModel<>(Filters.eq("_id", 1), secondReplacement, upsert),
                    new ReplaceOneModel<>(Filters.eq("_id", 2), new Document("p", 3), upsert));

            List<WriteCommand> trees = encode(models, Document.class, 0, true, CommandOptions.NONE, false);

            assertThat(trees).extracting(WriteCommand::size).containsExactly(extra == 0 ? 2 : 1, extra == 0 ? 1 : 2);
            assertThat(trees).allMatch(WriteCommand::encodedByDriver);
            TreeCommandsTest.assertSameCommands(
                    "extra " + extra,
                    trees,
                    encode(models, Document.class, Long.MAX_VALUE, true, CommandOptions.NONE, false));
        }
    }

    @Test
    void aReplacementsId_staysWhereTheCallerPutIt_asTheDriverSendsIt() {
        List<WriteModel<Document>> models = List.of(new ReplaceOneModel<>(
                Filters.eq("_id", 5), new Document("v", 1).append("_id", 5), new ReplaceOptions().upsert(true)));

        WriteCommand tree = encode(models, Document.class, 0, false, CommandOptions.NONE, false)
                .get(0);

        BsonDocument statement =
                tree.toCommand(1L, 2_000, null, null).getArray("updates").get(0).asDocument();
        assertThat(tree.encodedByDriver()).isTrue();
        assertThat(statement.keySet()).containsExactly("q", "u", "upsert");
        assertThat(statement.getDocument("u").keySet()).containsExactly("v", "_id");
        TreeCommandsTest.assertSameCommands(
                "_id last",
                List.of(tree),
                encode(models, Document.class, Long.MAX_VALUE, false, CommandOptions.NONE, false));
    }

    @Test
    void replacementsByDefault_areTreesFrom1KiB_andSmallerOnesTheGuardsBytes() {
        WriteCommandEncoder<Document> encoder = new WriteCommandEncoder<>("c", Document.class, REGISTRY);
        for (int payload : new int[] {900, 1_100}) {
            List<WriteModel<Document>> models = List.of(
                    new ReplaceOneModel<>(
                            Filters.eq("_id", 1),
                            new Document("_id", 1).append("p", new Binary(new byte[payload])),
                            new ReplaceOptions().upsert(true)),
                    new ReplaceOneModel<>(Filters.eq("_id", 2), new Document("_id", 2).append("p", 2)));
            PlannedBulk plan = BulkPlanner.of(Document.class, REGISTRY).plan(models, PlanOptions.unordered());

            List<WriteCommand> commands = encoder.encode(plan, List.of(0, 1), false, CommandOptions.NONE);

            assertThat(commands)
                    .as(payload + " bytes")
                    .singleElement()
                    .matches(command -> command.encodedByDriver() == (payload > 1_024));
            TreeCommandsTest.assertSameCommands(
                    payload + " bytes",
                    commands,
                    encode(models, Document.class, Long.MAX_VALUE, false, CommandOptions.NONE, false));
        }
    }

    /**
     * A write on {@code _id} i: mostly replacements with random options, some of a form only the codec can tell
     * ({@code unsure}; {@code unsureAsDocuments}: only while a {@code Document}).
     */
    private static WriteModel<Document> randomWrite(
            Random random, int i, boolean large, Set<Integer> unsure, Set<Integer> unsureAsDocuments) {
        int kind = random.nextInt(10);
        if (kind == 0) {
            return new InsertOneModel<>(new Document("_id", "insert" + i).append("v", i));
        } else if (kind == 1) {
            return new UpdateOneModel<>(Filters.eq("_id", i), Updates.set("v", i));
        } else if (kind == 2) {
            return new DeleteOneModel<>(Filters.eq("_id", i));
        }
        Document replacement = new Document();
        int fields = random.nextInt(5);
        int idAt = random.nextInt(3) == 0 ? -1 : random.nextInt(fields + 1);
        for (int f = 0; f <= fields; f++) {
            if (f == idAt) {
                replacement.append("_id", i);
            }
            if (f < fields) {
                replacement.append("f" + f, TreeCommandsTest.randomValue(random, 0, false));
            }
        }
        if (large) {
            replacement.append("big", new Binary(new byte[random.nextInt(4 * MIB)]));
        }
        if (random.nextInt(12) == 0) {
            replacement.append("short", (short) 5); // a codec of its own (an Int32 once a BsonDocument)
            unsureAsDocuments.add(i);
        } else if (random.nextInt(12) == 0) {
            replacement.append("s", "smile \uD83D\uDE00"); // surrogates
            unsure.add(i);
        }
        ReplaceOptions options = new ReplaceOptions().upsert(random.nextBoolean());
        if (random.nextInt(4) == 0) {
            options.collation(Collation.builder().locale("fr").build());
        }
        switch (random.nextInt(6)) {
            case 0 -> options.hint(Indexes.ascending("f0"));
            case 1 -> options.hintString("f0_1");
            case 2 -> {
                options.hint(new Document("f0", 1)); // converted by the collection's codec: the guard's bytes
                unsure.add(i);
            }
            default -> {}
        }
        if (random.nextInt(5) == 0) {
            options.sort(Sorts.descending("f1"));
        }
        Bson filter = switch (random.nextInt(3)) {
            case 0 -> Filters.eq("_id", i);
            case 1 -> new Document("_id", i);
            default -> Filters.and(Filters.eq("_id", i), Filters.exists("f0"));
        };
        return new ReplaceOneModel<>(filter, replacement, options);
    }

    /** The size of {@code {q: {_id: id}, u: replacement, upsert}} as the driver encodes it. */
    private static int statementSize(int id, Document replacement, boolean upsert) {
        BsonDocument statement = new BsonDocument("q", new BsonDocument("_id", new BsonInt32(id)))
                .append("u", asBson(replacement))
                .append("upsert", BsonBoolean.valueOf(upsert));
        return new RawBsonDocument(statement, new BsonDocumentCodec())
                .getByteBuffer()
                .remaining();
    }

    /** The same writes over {@code BsonDocument}s, their documents in the same field order. */
    private static List<WriteModel<BsonDocument>> toBson(List<WriteModel<Document>> models) {
        List<WriteModel<BsonDocument>> bson = new ArrayList<>();
        for (WriteModel<Document> model : models) {
            if (model instanceof ReplaceOneModel<Document> replace) {
                bson.add(new ReplaceOneModel<>(
                        replace.getFilter(), asBson(replace.getReplacement()), replace.getReplaceOptions()));
            } else if (model instanceof InsertOneModel<Document> insert) {
                bson.add(new InsertOneModel<>(asBson(insert.getDocument())));
            } else if (model instanceof UpdateOneModel<Document> update) {
                bson.add(new UpdateOneModel<>(update.getFilter(), update.getUpdate()));
            } else {
                bson.add(new DeleteOneModel<>(((DeleteOneModel<Document>) model).getFilter()));
            }
        }
        return bson;
    }

    private static <T> List<WriteCommand> encode(
            List<WriteModel<T>> models,
            Class<T> documentClass,
            long treesFrom,
            boolean ordered,
            CommandOptions options,
            boolean alone) {
        PlannedBulk plan = BulkPlanner.of(documentClass, REGISTRY)
                .plan(models, ordered ? PlanOptions.ordered() : PlanOptions.unordered());
        WriteCommandEncoder<T> encoder = new WriteCommandEncoder<>("c", documentClass, REGISTRY, treesFrom);
        List<Integer> indices = IntStream.range(0, models.size()).boxed().toList();
        return encoder.encode(plan, indices, ordered, options, alone);
    }
}
