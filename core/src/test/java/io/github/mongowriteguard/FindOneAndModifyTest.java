package io.github.mongowriteguard;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowable;

import com.mongodb.MongoCommandException;
import com.mongodb.client.MongoCollection;
import com.mongodb.client.model.Collation;
import com.mongodb.client.model.Filters;
import com.mongodb.client.model.FindOneAndDeleteOptions;
import com.mongodb.client.model.FindOneAndReplaceOptions;
import com.mongodb.client.model.FindOneAndUpdateOptions;
import com.mongodb.client.model.Projections;
import com.mongodb.client.model.ReturnDocument;
import com.mongodb.client.model.Sorts;
import com.mongodb.client.model.Updates;
import io.github.mongowriteguard.exception.WriteOutcomeUnknownException;
import io.github.mongowriteguard.retry.RetryPolicy;
import io.github.mongowriteguard.testkit.EmulatedCluster;
import io.github.mongowriteguard.testkit.EmulatedReplicaSet;
import io.github.mongowriteguard.testkit.stall.Stall;
import io.github.mongowriteguard.testkit.stall.StallHandle;
import io.github.mongowriteguard.testkit.truth.ReceivedCommand;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.function.BiFunction;
import org.bson.BsonDocument;
import org.bson.Document;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * {@code findOneAndUpdate/Replace/Delete}, guarded and plain side by side on the same emulated replica set: the same
 * returned document, the same documents stored, the same command on the wire (but for the guard's deadline,
 * transaction number and comment), the same exceptions; and the guard's own promises (one server copy after a
 * socket timeout).
 */
class FindOneAndModifyTest {
    /** Top-level fields the guard sets itself (README: deliberate differences). */
    private static final Set<String> GUARD_FIELDS =
            Set.of("lsid", "txnNumber", "maxTimeMS", "comment", "$db", "$clusterTime", "$readPreference");

    private EmulatedReplicaSet cluster;
    private GuardFixture fixture;
    private MongoCollection<Document> raw;
    private MongoCollection<Document> guardedRaw;
    private GuardedCollection<Document> guarded;
    private final List<BsonDocument> commands = new ArrayList<>();

    enum Call {
        UPDATE_AFTER((c, g) -> g
                ? c.guarded.findOneAndUpdate(
                        Filters.eq("k", 1),
                        Updates.inc("n", 1),
                        new FindOneAndUpdateOptions()
                                .returnDocument(ReturnDocument.AFTER)
                                .projection(Projections.exclude("k")))
                : c.raw.findOneAndUpdate(
                        Filters.eq("k", 1),
                        Updates.inc("n", 1),
                        new FindOneAndUpdateOptions()
                                .returnDocument(ReturnDocument.AFTER)
                                .projection(Projections.exclude("k")))),
        UPDATE_SORTED_UPSERT((c, g) -> {
            FindOneAndUpdateOptions options = new FindOneAndUpdateOptions()
                    .sort(Sorts.descending("_id"))
                    .upsert(true)
                    .collation(Collation.builder().locale("simple").build())
                    .comment("caller")
                    .let(new Document("x", 1));
            return g
                    ? c.guarded.findOneAndUpdate(Filters.eq("k", 9), Updates.set("v", "u"), options)
                    : c.raw.findOneAndUpdate(Filters.eq("k", 9), Updates.set("v", "u"), options);
        }),
        UPDATE_ARRAY_FILTERS((c, g) -> {
            FindOneAndUpdateOptions options = new FindOneAndUpdateOptions()
                    .arrayFilters(List.of(Filters.gte("e", 2)))
                    .bypassDocumentValidation(true);
            return g
                    ? c.guarded.findOneAndUpdate(Filters.eq("_id", 1), Updates.set("a.$[e]", 0), options)
                    : c.raw.findOneAndUpdate(Filters.eq("_id", 1), Updates.set("a.$[e]", 0), options);
        }),
        REPLACE((c, g) -> g
                ? c.guarded.findOneAndReplace(Filters.eq("_id", 2), new Document("k", 2).append("r", true))
                : c.raw.findOneAndReplace(Filters.eq("_id", 2), new Document("k", 2).append("r", true))),
        REPLACE_UPSERT_AFTER((c, g) -> {
            FindOneAndReplaceOptions options =
                    new FindOneAndReplaceOptions().upsert(true).returnDocument(ReturnDocument.AFTER);
            return g
                    ? c.guarded.findOneAndReplace(Filters.eq("_id", 7), new Document("k", 7), options)
                    : c.raw.findOneAndReplace(Filters.eq("_id", 7), new Document("k", 7), options);
        }),
        DELETE((c, g) -> g
                ? c.guarded.findOneAndDelete(
                        Filters.eq("k", 2), new FindOneAndDeleteOptions().sort(Sorts.ascending("_id")))
                : c.raw.findOneAndDelete(
                        Filters.eq("k", 2), new FindOneAndDeleteOptions().sort(Sorts.ascending("_id")))),
        DELETE_NONE((c, g) ->
                g ? c.guarded.findOneAndDelete(Filters.eq("k", 404)) : c.raw.findOneAndDelete(Filters.eq("k", 404)));

        final BiFunction<FindOneAndModifyTest, Boolean, Document> run;

        Call(BiFunction<FindOneAndModifyTest, Boolean, Document> run) {
            this.run = run;
        }
    }

    @BeforeEach
    void start() {
        cluster = EmulatedCluster.replicaSet().start();
        fixture = new GuardFixture(
                cluster.connectionString(),
                WriteGuardSettings.defaults(),
                5_000,
                builder -> builder.addCommandListener(new com.mongodb.event.CommandListener() {
                    @Override
                    public void commandStarted(com.mongodb.event.CommandStartedEvent event) {
                        if (event.getCommandName().equals("findAndModify")) {
                            commands.add(event.getCommand().clone());
                        }
                    }
                }));
        raw = fixture.client.getDatabase("fam").getCollection("driver");
        guardedRaw = fixture.client.getDatabase("fam").getCollection("guard");
        for (MongoCollection<Document> collection : List.of(raw, guardedRaw)) {
            collection.insertMany(List.of(
                    new Document("_id", 1).append("k", 1).append("n", 0).append("a", List.of(1, 2, 3)),
                    new Document("_id", 2).append("k", 2),
                    new Document("_id", 3).append("k", 2)));
        }
        guarded = fixture.wrap(guardedRaw);
    }

    @AfterEach
    void stop() {
        fixture.close();
        cluster.close();
    }

    @ParameterizedTest
    @EnumSource(Call.class)
    void returnsAndStoresWhatTheDriverDoes_andSendsItsCommand(Call call) {
        Document driver = call.run.apply(this, false);
        Document guard = call.run.apply(this, true);

        assertThat(guard).isEqualTo(driver);
        assertThat(documents(guardedRaw)).isEqualTo(documents(raw));
        assertThat(commands).hasSize(2);
        BsonDocument driverCommand = withoutGuardFields(commands.get(0));
        BsonDocument guardCommand = withoutGuardFields(commands.get(1));
        assertThat(guardCommand.getString("findAndModify").getValue()).isEqualTo("guard");
        guardCommand.put("findAndModify", driverCommand.get("findAndModify"));
        assertThat(guardCommand.toJson()).isEqualTo(driverCommand.toJson());
        assertThat(commands.get(1).getNumber("maxTimeMS").longValue()).isEqualTo(guarded.serverDeadlineMillis());
        assertThat(commands.get(1).containsKey("txnNumber")).isTrue();
        if (commands.get(0).containsKey("comment")) {
            assertThat(commands.get(1).get("comment")).isEqualTo(commands.get(0).get("comment"));
        }
    }

    @Test
    void aDuplicateKey_isTheDriversCommandException() {
        Throwable driver = catchThrowable(() -> raw.findOneAndUpdate(
                Filters.eq("_id", 99), Updates.set("k", 1), new FindOneAndUpdateOptions().upsert(true)));
        raw.createIndex(new Document("k", 1));
        Throwable guard = catchThrowable(() -> guarded.findOneAndReplace(Filters.eq("_id", 1), new Document("_id", 2)));
        Throwable plain = catchThrowable(() -> raw.findOneAndReplace(Filters.eq("_id", 1), new Document("_id", 2)));

        assertThat(driver).isNull();
        assertThat(plain).isInstanceOf(MongoCommandException.class);
        assertThat(guard).isExactlyInstanceOf(plain.getClass());
        assertThat(((MongoCommandException) guard).getErrorCode())
                .isEqualTo(((MongoCommandException) plain).getErrorCode());
    }

    @Test
    void afterASocketTimeout_theGuardResendsTheSameCopy_andNeverStartsASecond() throws Exception {
        WriteGuard guard = WriteGuard.create(WriteGuardSettings.builder()
                .retryPolicy(RetryPolicy.builder()
                        .maxAttempts(3)
                        .initialBackoff(Duration.ofMillis(10))
                        .gateGrace(Duration.ofMillis(20))
                        .build())
                .build());
        try (GuardFixture slow = new GuardFixture(cluster.connectionString(), guard.getSettings(), 300, b -> {})) {
            GuardedCollection<Document> stalled =
                    slow.wrap(slow.client.getDatabase("fam").getCollection("guard"));
            Throwable thrown;
            try (StallHandle stall =
                    cluster.primary().stall(Stall.uninterruptible("fam.guard", Duration.ofMillis(1_500)))) {
                thrown = catchThrowable(() -> stalled.findOneAndUpdate(Filters.eq("_id", 1), Updates.inc("n", 1)));
            }
            // The same copy is resent at once; each resend waits behind the stalled one on the session's check-out
            // until its deadline, which proves nothing about the first send: unknown, never a second copy.
            assertThat(thrown).isInstanceOf(WriteOutcomeUnknownException.class);
            assertThat(cluster.truth().awaitIdle(c -> true, Duration.ofSeconds(10)))
                    .isTrue();
            List<ReceivedCommand> sends =
                    cluster.truth().commands(c -> c.commandName().equals("findAndModify"));
            assertThat(sends).isNotEmpty();
            assertThat(cluster.truth().copies(c -> c.commandName().equals("findAndModify")))
                    .hasSize(1);
            assertThat(guardedRaw.find(Filters.eq("_id", 1)).first().getInteger("n"))
                    .as("applied once")
                    .isEqualTo(1);
        }
    }

    /** The documents as BSON; an {@code _id} the server generated for an upsert differs per run, so it is named only. */
    private static List<BsonDocument> documents(MongoCollection<Document> collection) {
        List<BsonDocument> documents = collection
                .withDocumentClass(BsonDocument.class)
                .find()
                .sort(Sorts.ascending("_id"))
                .into(new ArrayList<>());
        documents.forEach(d -> {
            if (d.isObjectId("_id")) {
                d.put("_id", new org.bson.BsonString("generated ObjectId"));
            }
        });
        return documents;
    }

    private static BsonDocument withoutGuardFields(BsonDocument command) {
        BsonDocument copy = new BsonDocument();
        copy.putAll(command);
        GUARD_FIELDS.forEach(copy::remove);
        return copy;
    }
}
