package io.github.mongowriteguard.outcome;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowable;

import com.mongodb.ClientBulkWriteException;
import com.mongodb.ConnectionString;
import com.mongodb.MongoBulkWriteException;
import com.mongodb.MongoClientSettings;
import com.mongodb.MongoCommandException;
import com.mongodb.MongoNodeIsRecoveringException;
import com.mongodb.MongoWriteException;
import com.mongodb.client.MongoClient;
import com.mongodb.client.MongoClients;
import com.mongodb.client.MongoCollection;
import com.mongodb.client.model.BulkWriteOptions;
import com.mongodb.client.model.DeleteManyModel;
import com.mongodb.client.model.Filters;
import com.mongodb.client.model.InsertOneModel;
import com.mongodb.client.model.UpdateManyModel;
import com.mongodb.client.model.Updates;
import com.mongodb.client.model.WriteModel;
import com.mongodb.client.model.bulk.ClientBulkWriteOptions;
import com.mongodb.client.model.bulk.ClientNamespacedWriteModel;
import io.github.mongowriteguard.GuardedCollection;
import io.github.mongowriteguard.WriteGuard;
import io.github.mongowriteguard.WriteGuardSettings;
import io.github.mongowriteguard.exception.GuardedBulkWriteException;
import io.github.mongowriteguard.exception.GuardedWriteConcernException;
import io.github.mongowriteguard.exception.GuardedWriteException;
import io.github.mongowriteguard.retry.RetryPolicy;
import io.github.mongowriteguard.testkit.EmulatedCluster;
import io.github.mongowriteguard.testkit.EmulatedReplicaSet;
import io.github.mongowriteguard.testkit.EmulatedShardedCluster;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.function.Function;
import java.util.stream.Stream;
import org.bson.Document;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * A driver-style method throws the driver's own exception only when nothing in the call can have applied, earlier
 * commands included; otherwise the guard's exception, which carries the outcome. The driver's bulk throws a failed
 * command's exception as it is even after earlier batches applied ({@code MixedBulkWriteOperation}), and its
 * single-write methods a plain {@code MongoWriteException} or {@code MongoWriteConcernException} after documents
 * changed: each row is one throw site of {@code DriverExceptions} with the hole it had, on the emulated replica set and
 * through the emulated mongos.
 */
class NoDriverExceptionAfterAppliedTest {
    private static EmulatedReplicaSet set;
    private static EmulatedShardedCluster sharded;

    @BeforeAll
    static void start() {
        set = EmulatedCluster.replicaSet().start();
        sharded = EmulatedCluster.sharded().shards(2).start();
    }

    @AfterAll
    static void stop() {
        set.close();
        sharded.close();
    }

    enum Where {
        REPLICA_SET,
        MONGOS
    }

    /** One call under one fault, and what it must throw and report. */
    record Case(
            String name,
            Where where,
            String failPoint,
            Function<GuardedCollection<Document>, Object> call,
            Class<? extends Throwable> thrown,
            List<WriteStatus> statuses,
            long changedDocuments) {
        @Override
        public String toString() {
            return name + " (" + where + ")";
        }
    }

    private static final String INTERRUPTED_INSERTS =
            "{failCommands: ['insert'], errorCode: 11602, errorLabels: ['RetryableWriteError']}";
    private static final String NOT_PRIMARY_DELETES = "{failCommands: ['delete'], errorCode: 10107}";
    private static final String WRITE_CONCERN_FAILED_UPDATES = "{failCommands: ['update'], writeConcernError:"
            + " {code: 64, codeName: 'WriteConcernFailed', errmsg: 'waiting for replication timed out',"
            + " errInfo: {wtimeout: true}}}";
    private static final String WRITE_CONCERN_FAILED_FIND_AND_MODIFY = "{failCommands: ['findAndModify'],"
            + " writeConcernError: {code: 64, codeName: 'WriteConcernFailed', errmsg: 'waiting for replication timed"
            + " out', errInfo: {wtimeout: true}}}";

    private static final List<WriteModel<Document>> UPDATE_MANY_THEN_INSERT = List.of(
            new UpdateManyModel<>(Filters.eq("s", 1), Updates.set("changed", true)),
            new InsertOneModel<>(new Document("_id", "new")));

    static Stream<Case> cases() {
        Stream.Builder<Case> cases = Stream.builder();
        for (Where where : Where.values()) {
            // The reported case: the updateMany changed all 4 documents, then the insert's command failed with 11602.
            cases.add(new Case(
                    "unordered [updateMany, insertOne], insert interrupted (11602)",
                    where,
                    INTERRUPTED_INSERTS,
                    guarded -> guarded.bulkWrite(UPDATE_MANY_THEN_INSERT, new BulkWriteOptions().ordered(false)),
                    GuardedBulkWriteException.class,
                    List.of(WriteStatus.APPLIED, WriteStatus.FAILED),
                    4));
            cases.add(new Case(
                    "ordered [insertOne, deleteMany], delete refused NotWritablePrimary",
                    where,
                    NOT_PRIMARY_DELETES,
                    guarded -> guarded.bulkWrite(List.of(
                            new InsertOneModel<>(new Document("_id", "new")),
                            new DeleteManyModel<>(Filters.eq("s", 1)))),
                    GuardedBulkWriteException.class,
                    List.of(WriteStatus.APPLIED, WriteStatus.FAILED),
                    1));
            // Nothing can have applied: the driver's own exception, as the driver throws it.
            cases.add(new Case(
                    "bulkWrite [insertOne] interrupted (11602): nothing applied",
                    where,
                    INTERRUPTED_INSERTS,
                    guarded -> guarded.bulkWrite(List.of(new InsertOneModel<>(new Document("_id", "new")))),
                    MongoNodeIsRecoveringException.class,
                    List.of(WriteStatus.FAILED),
                    0));
            cases.add(new Case(
                    "insertOne interrupted (11602): nothing applied",
                    where,
                    INTERRUPTED_INSERTS,
                    guarded -> guarded.insertOne(new Document("_id", "new")),
                    MongoNodeIsRecoveringException.class,
                    List.of(WriteStatus.FAILED),
                    0));
            cases.add(new Case(
                    "updateMany applied, write concern failed",
                    where,
                    WRITE_CONCERN_FAILED_UPDATES,
                    guarded -> guarded.updateMany(Filters.eq("s", 1), Updates.set("changed", true)),
                    GuardedWriteConcernException.class,
                    List.of(WriteStatus.UNKNOWN),
                    4));
            cases.add(new Case(
                    "findOneAndUpdate applied, write concern failed",
                    where,
                    WRITE_CONCERN_FAILED_FIND_AND_MODIFY,
                    guarded -> guarded.findOneAndUpdate(Filters.eq("_id", 1), Updates.set("changed", true)),
                    GuardedWriteConcernException.class,
                    List.of(WriteStatus.UNKNOWN),
                    1));
        }
        return cases.build();
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("cases")
    void theDriversExceptionOnlyWhenNothingCanHaveApplied(Case row) {
        String connectionString = row.where() == Where.MONGOS ? sharded.connectionString() : set.connectionString();
        WriteGuard guard = guard();
        try (MongoClient client = client(guard, connectionString)) {
            MongoCollection<Document> raw = seeded(client, row.name());
            Throwable thrown =
                    thrownUnder(client, row.failPoint(), () -> row.call().apply(guard.guardCollection(client, raw)));

            assertThat(thrown).as(row.name()).isInstanceOf(row.thrown());
            WriteOutcome<?> outcome = outcomeOf(thrown);
            long changed =
                    raw.countDocuments(Filters.eq("changed", true)) + raw.countDocuments(Filters.eq("_id", "new"));
            assertThat(changed).as("documents the call changed").isEqualTo(row.changedDocuments());
            if (row.changedDocuments() == 0 && row.statuses().stream().noneMatch(s -> s == WriteStatus.APPLIED)) {
                assertThat(outcome)
                        .as("the driver's own exception carries no outcome")
                        .isNull();
                assertThat(thrown).isNotInstanceOf(GuardedBulkWriteException.class);
                return;
            }
            assertThat(outcome).as("the guard's exception carries the outcome").isNotNull();
            assertThat(outcome.outcomes()).extracting(IndexOutcome::status).containsExactlyElementsOf(row.statuses());
        }
    }

    /**
     * The reported case in full: the guard's exception is still the driver's bulk exception, with the 4 documents the
     * updateMany changed in its result, the interrupted insert among its errors and the driver's exception as cause.
     */
    @Test
    void mongos_updateManyThenInterruptedInsert_reportsTheChangedDocuments() {
        WriteGuard guard = guard();
        try (MongoClient client = client(guard, sharded.connectionString())) {
            MongoCollection<Document> raw = seeded(client, "full");
            Throwable thrown = thrownUnder(
                    client,
                    INTERRUPTED_INSERTS,
                    () -> guard.guardCollection(client, raw)
                            .asMongoCollection()
                            .bulkWrite(UPDATE_MANY_THEN_INSERT, new BulkWriteOptions().ordered(false)));

            assertThat(thrown).isInstanceOf(MongoBulkWriteException.class).isNotInstanceOf(MongoCommandException.class);
            GuardedBulkWriteException bulk = (GuardedBulkWriteException) thrown;
            assertThat(bulk.getWriteResult().getModifiedCount()).isEqualTo(4);
            assertThat(bulk.getWriteErrors()).singleElement().satisfies(error -> {
                assertThat(error.getIndex()).isEqualTo(1);
                assertThat(error.getCode()).isEqualTo(11602);
            });
            assertThat(bulk.getCause()).isInstanceOf(MongoNodeIsRecoveringException.class);
            assertThat(bulk.outcome().outcome(1).retrySafe())
                    .as("the insert was refused before it ran, with its own _id: a new copy is safe")
                    .isTrue();
            assertThat(raw.countDocuments(Filters.eq("changed", true))).isEqualTo(4);
        }
    }

    /**
     * The client-level bulk: the driver's {@code ClientBulkWriteException} (a final class) carries what applied in its
     * partial result, with the failed command as its cause, as the driver's own does; never the command's exception
     * alone after a write applied.
     */
    @Test
    void clientBulk_updateManyThenInterruptedInsert_carriesThePartialResult() {
        WriteGuard guard = guard();
        try (MongoClient client = client(guard, sharded.connectionString())) {
            MongoCollection<Document> raw = seeded(client, "client");
            Throwable thrown = thrownUnder(
                    client,
                    INTERRUPTED_INSERTS,
                    () -> guard.guardClient(client)
                            .bulkWrite(
                                    List.of(
                                            ClientNamespacedWriteModel.updateMany(
                                                    raw.getNamespace(),
                                                    Filters.eq("s", 1),
                                                    Updates.set("changed", true)),
                                            ClientNamespacedWriteModel.insertOne(
                                                    raw.getNamespace(), new Document("_id", "new"))),
                                    ClientBulkWriteOptions.clientBulkWriteOptions()
                                            .ordered(false)));

            assertThat(thrown).isInstanceOf(ClientBulkWriteException.class);
            ClientBulkWriteException bulk = (ClientBulkWriteException) thrown;
            assertThat(bulk.getPartialResult()).isPresent();
            assertThat(bulk.getPartialResult().get().getModifiedCount()).isEqualTo(4);
            assertThat(raw.countDocuments(Filters.eq("changed", true))).isEqualTo(4);
        }
    }

    /** A multi-document write that failed part-way is the guard's {@code MongoWriteException}, with its outcome. */
    @Test
    void replicaSet_updateManyFailingPartWay_isTheGuardsWriteException() {
        WriteGuard guard = guard();
        try (MongoClient client = client(guard, set.connectionString())) {
            MongoCollection<Document> raw = client.getDatabase("applied").getCollection("partway");
            raw.drop();
            raw.insertMany(List.of(
                    new Document("_id", 1).append("s", 1).append("n", 1),
                    new Document("_id", 2).append("s", 1).append("n", "not a number"),
                    new Document("_id", 3).append("s", 1).append("n", 3)));

            Throwable thrown = catchThrowable(
                    () -> guard.guardCollection(client, raw).updateMany(Filters.eq("s", 1), Updates.inc("n", 1)));

            assertThat(thrown).isInstanceOf(MongoWriteException.class);
            assertThat(thrown).isInstanceOf(GuardedWriteException.class);
            IndexOutcome updateMany = ((GuardedWriteException) thrown).outcome().outcome(0);
            assertThat(updateMany.status()).isEqualTo(WriteStatus.FAILED);
            assertThat(updateMany.mayHaveChangedDocuments()).isTrue();
            assertThat(raw.find(Filters.eq("_id", 1)).first().get("n"))
                    .as("changed before the error")
                    .isEqualTo(2);
        }
    }

    private static WriteOutcome<?> outcomeOf(Throwable thrown) {
        if (thrown instanceof GuardedBulkWriteException bulk) {
            return bulk.outcome();
        }
        if (thrown instanceof GuardedWriteException write) {
            return write.outcome();
        }
        if (thrown instanceof GuardedWriteConcernException writeConcern) {
            return writeConcern.outcome();
        }
        if (thrown instanceof io.github.mongowriteguard.exception.WriteGuardException guardException) {
            return guardException.outcome();
        }
        return null;
    }

    private static MongoCollection<Document> seeded(MongoClient client, String name) {
        MongoCollection<Document> raw =
                client.getDatabase("applied").getCollection("c" + Integer.toHexString(name.hashCode()));
        raw.drop();
        raw.insertMany(List.of(
                new Document("_id", 1).append("s", 1),
                new Document("_id", 2).append("s", 1),
                new Document("_id", 3).append("s", 1),
                new Document("_id", 4).append("s", 1)));
        return raw;
    }

    /** What {@code call} throws while the {@code failCommand} fail point of {@code data} is on. */
    private static Throwable thrownUnder(
            MongoClient client, String data, org.assertj.core.api.ThrowableAssert.ThrowingCallable call) {
        failPoint(client, data);
        try {
            return catchThrowable(call);
        } finally {
            failPoint(client, null);
        }
    }

    /** Sets (or, for null, turns off) the {@code failCommand} fail point of the server the client talks to. */
    private static void failPoint(MongoClient client, String data) {
        Document command = new Document("configureFailPoint", "failCommand");
        if (data == null) {
            command.append("mode", "off");
        } else {
            command.append("mode", "alwaysOn").append("data", Document.parse(data));
        }
        client.getDatabase("admin").runCommand(command);
    }

    private static WriteGuard guard() {
        return WriteGuard.create(WriteGuardSettings.builder()
                .serverDeadline(Duration.ofSeconds(5))
                .retryPolicy(RetryPolicy.builder()
                        .maxAttempts(2)
                        .initialBackoff(Duration.ofMillis(10))
                        .gateGrace(Duration.ofMillis(20))
                        .build())
                .build());
    }

    private static MongoClient client(WriteGuard guard, String connectionString) {
        return MongoClients.create(guard.configure(MongoClientSettings.builder()
                        .applyConnectionString(new ConnectionString(connectionString))
                        .applyToSocketSettings(s -> s.readTimeout(10, TimeUnit.SECONDS)))
                .build());
    }
}
