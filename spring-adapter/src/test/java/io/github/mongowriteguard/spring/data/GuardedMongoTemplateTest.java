package io.github.mongowriteguard.spring.data;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import com.mongodb.ConnectionString;
import com.mongodb.MongoClientSettings;
import com.mongodb.client.MongoClient;
import com.mongodb.client.MongoClients;
import com.mongodb.client.model.IndexOptions;
import com.mongodb.client.model.Sorts;
import com.mongodb.event.CommandListener;
import com.mongodb.event.CommandStartedEvent;
import io.github.mongowriteguard.WriteGuard;
import io.github.mongowriteguard.testkit.EmulatedCluster;
import io.github.mongowriteguard.testkit.EmulatedReplicaSet;
import io.github.mongowriteguard.testkit.EmulatedShardedCluster;
import io.github.mongowriteguard.testkit.sharding.ShardKey;
import java.util.ArrayList;
import java.util.EnumMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import org.bson.BsonDocument;
import org.bson.BsonString;
import org.bson.Document;
import org.jspecify.annotations.Nullable;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;
import org.springframework.context.ApplicationListener;
import org.springframework.context.support.GenericApplicationContext;
import org.springframework.data.mongodb.core.MongoTemplate;
import org.springframework.data.mongodb.core.mapping.event.MongoMappingEvent;

/**
 * Every write method of the template ({@link TemplateCall}), on {@link GuardedMongoTemplate} and on Spring Data's plain
 * {@link MongoTemplate} side by side, on the emulated replica set and on a 2-shard cluster (collections sharded hashed
 * on {@code _id}): the same return value, the same exception type (and cause type), the same stored documents, the
 * same lifecycle events; and every write command of the guarded template carries the guard's {@code maxTimeMS}.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class GuardedMongoTemplateTest {
    static final List<String> WRITE_COMMANDS = List.of("insert", "update", "delete", "findAndModify", "bulkWrite");
    private static final List<String> COLLECTIONS = List.of("items", "versioned", "auto");
    private static final ShardKey HASHED_ID = ShardKey.of(new BsonDocument("_id", new BsonString("hashed")));
    /** An ObjectId the driver or server generated: differs per run, so it is compared by its place only. */
    private static final Pattern OBJECT_ID = Pattern.compile("[0-9a-f]{24}");

    enum Deployment {
        REPLICA_SET,
        SHARDED
    }

    private EmulatedReplicaSet replicaSet;
    private EmulatedShardedCluster sharded;
    private final Map<Deployment, Side> sides = new EnumMap<>(Deployment.class);

    @BeforeAll
    void start() {
        replicaSet = EmulatedCluster.replicaSet().start();
        sharded = EmulatedCluster.sharded().shards(2).start();
        for (String database : List.of("guarded", "plain")) {
            for (String collection : COLLECTIONS) {
                sharded.shardCollection(database + "." + collection, HASHED_ID);
            }
        }
        sides.put(Deployment.REPLICA_SET, new Side(replicaSet.connectionString(), true));
        sides.put(Deployment.SHARDED, new Side(sharded.connectionString(), false));
    }

    @AfterAll
    void stop() {
        sides.values().forEach(Side::close);
        replicaSet.close();
        sharded.close();
    }

    Stream<Arguments> calls() {
        return Stream.of(Deployment.values())
                .flatMap(deployment -> Stream.of(TemplateCall.values()).map(call -> Arguments.of(deployment, call)));
    }

    @ParameterizedTest(name = "{0} {1}")
    @MethodSource("calls")
    void sameResultDocumentsExceptionAndEvents_asSpringsTemplate_andEveryWriteCarriesTheServerDeadline(
            Deployment deployment, TemplateCall call) {
        Side side = sides.get(deployment);
        assumeTrue(side.uniqueNames || !call.needsUniqueName(), "a sharded collection has no unique index on name");
        side.seed();

        Result plain = Result.of(side.plain, call);
        Result guarded = Result.of(side.guarded, call);

        assertThat(guarded.describe()).isEqualTo(plain.describe());
        if (deployment == Deployment.REPLICA_SET) {
            // the call does what it says on a replica set (on the sharded cluster, some are refused alike)
            if (call.expected == null) {
                assertThat(plain.error).as("plain template").isNull();
            } else {
                assertThat(plain.error).as("plain template").isInstanceOf(call.expected);
            }
        }
        if (call.documentsDiffer) {
            assertThat(side.documents("guarded"))
                    .containsAll(side.documents("plain"))
                    .hasSize(side.documents("plain").size() + 1);
        } else {
            assertThat(side.documents("guarded")).isEqualTo(side.documents("plain"));
        }
        assertThat(side.guardedEvents).isEqualTo(side.plainEvents);
        if (!call.documentsDiffer) {
            assertThat(statements(side.sent))
                    .as("statements on the wire")
                    .isEqualTo(statements(pinnedAsSingleDocument(side.plainSent)));
        }
        assertThat(side.sent)
                .as("write commands of the guarded template")
                .isNotEmpty()
                .allSatisfy(command ->
                        assertThat(command.getNumber("maxTimeMS").longValue()).isEqualTo(1000));
    }

    /** What a template call returned or threw, ObjectIds masked. */
    record Result(@Nullable Object value, @Nullable Throwable error) {
        static Result of(MongoTemplate template, TemplateCall call) {
            try {
                return new Result(call.run.apply(template), null);
            } catch (RuntimeException e) {
                return new Result(null, e);
            }
        }

        String describe() {
            if (error != null) {
                return "threw " + error.getClass().getName()
                        + (error.getCause() == null
                                ? ""
                                : " caused by " + error.getCause().getClass().getName());
            }
            return "returned " + mask(String.valueOf(value));
        }
    }

    /**
     * The statements of the write commands per command type in send order, as CONTRACT.md compares the guard's wire with
     * the driver's: the guard may split or group commands differently and sets its own top-level fields, but sends every
     * statement as the driver does. A findAndModify is one statement: the command without the fields the guard sets.
     */
    /**
     * Spring's commands as the guard sends them (README, differences table): an update with {@code multi: true} or a
     * delete with {@code limit: 0} whose filter pins {@code _id} by equality, without a collation of its own, is a
     * single-document statement ({@code multi} absent, {@code limit: 1}). These collections are unsharded or sharded on
     * {@code _id}, with the simple collation.
     */
    static List<BsonDocument> pinnedAsSingleDocument(List<BsonDocument> commands) {
        List<BsonDocument> result = new ArrayList<>();
        for (BsonDocument original : commands) {
            // A mutable copy all the way down (the captured commands hold immutable RawBsonDocuments).
            BsonDocument command = new org.bson.codecs.BsonDocumentCodec()
                    .decode(
                            new org.bson.BsonDocumentReader(original),
                            org.bson.codecs.DecoderContext.builder().build());
            String field = switch (command.getFirstKey()) {
                case "update" -> "updates";
                case "delete" -> "deletes";
                default -> null;
            };
            if (field != null) {
                for (org.bson.BsonValue value : command.getArray(field)) {
                    BsonDocument statement = value.asDocument();
                    if (!pinsId(statement.getDocument("q")) || statement.containsKey("collation")) {
                        continue;
                    }
                    if (statement
                            .getBoolean("multi", org.bson.BsonBoolean.FALSE)
                            .getValue()) {
                        statement.remove("multi");
                    }
                    if (field.equals("deletes") && statement.getNumber("limit").intValue() == 0) {
                        statement.put("limit", new org.bson.BsonInt32(1));
                    }
                }
            }
            result.add(command);
        }
        return result;
    }

    private static boolean pinsId(BsonDocument filter) {
        org.bson.BsonValue id = filter.get("_id");
        if (id == null || id.isArray() || id.isRegularExpression()) {
            return false;
        }
        if (id.isDocument() && id.asDocument().keySet().stream().anyMatch(key -> key.startsWith("$"))) {
            return id.asDocument().size() == 1 && id.asDocument().containsKey("$eq");
        }
        return true;
    }

    static Map<String, List<String>> statements(List<BsonDocument> commands) {
        Map<String, List<String>> statements = new java.util.LinkedHashMap<>();
        for (BsonDocument command : commands) {
            String name = command.getFirstKey();
            List<String> list = statements.computeIfAbsent(name, n -> new ArrayList<>());
            switch (name) {
                case "insert" ->
                    command.getArray("documents")
                            .forEach(d -> list.add(mask(d.asDocument().toJson())));
                case "update" ->
                    command.getArray("updates")
                            .forEach(d -> list.add(mask(d.asDocument().toJson())));
                case "delete" ->
                    command.getArray("deletes")
                            .forEach(d -> list.add(mask(d.asDocument().toJson())));
                default -> {
                    BsonDocument statement = new BsonDocument();
                    statement.putAll(command);
                    for (String field : List.of(
                            "lsid", "txnNumber", "maxTimeMS", "comment", "$db", "$clusterTime", "$readPreference")) {
                        statement.remove(field);
                    }
                    list.add(mask(statement.toJson()));
                }
            }
        }
        return statements;
    }

    static String mask(String text) {
        return OBJECT_ID.matcher(text).replaceAll("<ObjectId>");
    }

    /** Both templates on one deployment, on the databases {@code guarded} and {@code plain}. */
    static final class Side implements AutoCloseable {
        final boolean uniqueNames;
        final MongoClient guardedClient;
        final MongoClient plainClient;
        final GuardedMongoTemplate guarded;
        final MongoTemplate plain;
        final List<BsonDocument> sent = new CopyOnWriteArrayList<>();
        final List<BsonDocument> plainSent = new CopyOnWriteArrayList<>();
        final List<String> guardedEvents = new CopyOnWriteArrayList<>();
        final List<String> plainEvents = new CopyOnWriteArrayList<>();

        Side(String connectionString, boolean uniqueNames) {
            this.uniqueNames = uniqueNames;
            WriteGuard guard = WriteGuard.create();
            guardedClient = MongoClients.create(
                    guard.configure(settings(connectionString).addCommandListener(writesTo(sent)))
                            .build());
            plainClient = MongoClients.create(settings(connectionString)
                    .addCommandListener(writesTo(plainSent))
                    .build());
            guarded = new GuardedMongoTemplate(guardedClient, "guarded", guard);
            plain = new MongoTemplate(plainClient, "plain");
            guarded.setApplicationContext(eventsTo(guardedEvents));
            plain.setApplicationContext(eventsTo(plainEvents));
            if (uniqueNames) {
                for (String database : List.of("guarded", "plain")) {
                    plainClient
                            .getDatabase(database)
                            .getCollection("items")
                            .createIndex(new Document("name", 1), new IndexOptions().unique(true));
                }
            }
        }

        private static MongoClientSettings.Builder settings(String connectionString) {
            return MongoClientSettings.builder()
                    .applyConnectionString(new ConnectionString(connectionString))
                    .applyToSocketSettings(s -> s.readTimeout(1500, TimeUnit.MILLISECONDS)); // maxTimeMS 1000
        }

        static CommandListener writesTo(List<BsonDocument> sent) {
            return new CommandListener() {
                @Override
                public void commandStarted(CommandStartedEvent event) {
                    if (WRITE_COMMANDS.contains(event.getCommandName())) {
                        sent.add(event.getCommand().clone());
                    }
                }
            };
        }

        private static GenericApplicationContext eventsTo(List<String> events) {
            GenericApplicationContext context = new GenericApplicationContext();
            context.registerBean("events", ApplicationListener.class, () -> (ApplicationListener<MongoMappingEvent<?>>)
                    event -> events.add(event.getClass().getSimpleName() + " " + event.getCollectionName() + " "
                            + mask(String.valueOf(event.getSource()))));
            context.refresh();
            return context;
        }

        /** The same seed in both databases, written by the plain client (so the guarded client's listener sees only the call). */
        void seed() {
            for (String database : List.of("guarded", "plain")) {
                for (String collection : COLLECTIONS) {
                    plainClient.getDatabase(database).getCollection(collection).deleteMany(new Document());
                }
                plainClient
                        .getDatabase(database)
                        .getCollection("items")
                        .insertMany(List.of(
                                new Document("_id", "a").append("q", 1).append("name", "A"),
                                new Document("_id", "b").append("q", 2).append("name", "B"),
                                new Document("_id", "c").append("q", 2).append("name", "C")));
                plainClient
                        .getDatabase(database)
                        .getCollection("versioned")
                        .insertOne(new Document("_id", "v1").append("name", "V").append("version", 3L));
            }
            sent.clear();
            plainSent.clear();
            guardedEvents.clear();
            plainEvents.clear();
        }

        /** Every document of the database, per collection in {@code _id} order, generated ObjectIds masked. */
        List<String> documents(String database) {
            List<String> documents = new ArrayList<>();
            for (String collection : COLLECTIONS) {
                plainClient
                        .getDatabase(database)
                        .getCollection(collection, BsonDocument.class)
                        .find()
                        .sort(Sorts.ascending("_id"))
                        .forEach(document -> documents.add(collection + " " + mask(document.toJson())));
            }
            return documents;
        }

        @Override
        public void close() {
            guardedClient.close();
            plainClient.close();
        }
    }
}
