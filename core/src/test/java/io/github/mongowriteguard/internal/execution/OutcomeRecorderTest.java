package io.github.mongowriteguard.internal.execution;

import static org.assertj.core.api.Assertions.assertThat;

import com.mongodb.MongoClientSettings;
import com.mongodb.MongoCommandException;
import com.mongodb.MongoSocketReadTimeoutException;
import com.mongodb.MongoTimeoutException;
import com.mongodb.ServerAddress;
import com.mongodb.client.model.DeleteManyModel;
import com.mongodb.client.model.DeleteOneModel;
import com.mongodb.client.model.Filters;
import com.mongodb.client.model.InsertOneModel;
import com.mongodb.client.model.UpdateManyModel;
import com.mongodb.client.model.UpdateOneModel;
import com.mongodb.client.model.Updates;
import com.mongodb.client.model.WriteModel;
import com.mongodb.connection.ClusterConnectionMode;
import com.mongodb.connection.ClusterDescription;
import com.mongodb.connection.ClusterType;
import io.github.mongowriteguard.copies.CopyRecord;
import io.github.mongowriteguard.internal.ClientBinding;
import io.github.mongowriteguard.internal.command.CommandOptions;
import io.github.mongowriteguard.internal.command.WriteCommand;
import io.github.mongowriteguard.internal.command.WriteCommandEncoder;
import io.github.mongowriteguard.internal.outcome.RecordedWriteOutcome;
import io.github.mongowriteguard.internal.plan.BulkPlanner;
import io.github.mongowriteguard.internal.plan.PlanOptions;
import io.github.mongowriteguard.internal.plan.PlannedBulk;
import io.github.mongowriteguard.outcome.IndexOutcome;
import io.github.mongowriteguard.outcome.WriteOutcome;
import io.github.mongowriteguard.outcome.WriteStatus;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.function.Supplier;
import java.util.stream.Stream;
import org.bson.BsonDocument;
import org.bson.Document;
import org.bson.RawBsonDocument;
import org.bson.codecs.configuration.CodecRegistry;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * The reply-to-outcome table of {@link OutcomeRecorder}, without a server: every reply shape, for every kind of write,
 * on a first send and on a resend after a send that got no answer, to the status, error code, {@code retrySafe},
 * counts and whether the call stops. The end-to-end tests (faults, failover, differential) show the same rules on the
 * wire; this one names the rule that changed when a branch of the recorder changes.
 */
class OutcomeRecorderTest {
    private static final CodecRegistry REGISTRY = MongoClientSettings.getDefaultCodecRegistry();
    /** mongos' words for a child batch it stopped waiting for at its deadline ({@code batch_write_exec.cpp}). */
    private static final String ROUTER_DEADLINE_MESSAGE =
            "Write results unavailable from shard0:27018 :: caused by :: operation exceeded time limit";

    private static final String ROUTER_KILLED_MESSAGE =
            "Write results unavailable from shard0:27018 :: caused by :: operation was interrupted";
    /** A client whose driver saw a replica set: a mongod answers. */
    private static final ClientBinding MONGOD = binding(ClusterType.REPLICA_SET);
    /** A client whose driver saw a sharded cluster: mongos answers. */
    private static final ClientBinding MONGOS = binding(ClusterType.SHARDED);

    private static ClientBinding binding(ClusterType type) {
        ClientBinding binding = new ClientBinding(null, 0, null);
        binding.select(new ClusterDescription(ClusterConnectionMode.MULTIPLE, type, List.of()));
        return binding;
    }

    /** One write of each kind the recorder tells apart (single-document or not, idempotent or not, own _id or not). */
    enum Kind {
        INSERT(() -> new InsertOneModel<>(new Document("_id", 1))),
        INSERT_ASSIGNED_ID(() -> new InsertOneModel<>(new Document("x", 1))),
        UPDATE_ONE_SET(() -> new UpdateOneModel<>(Filters.eq("_id", 1), Updates.set("x", 1))),
        UPDATE_ONE_INC(() -> new UpdateOneModel<>(Filters.eq("_id", 1), Updates.inc("x", 1))),
        DELETE_ONE(() -> new DeleteOneModel<>(Filters.eq("_id", 1))),
        UPDATE_MANY(() -> new UpdateManyModel<>(Filters.gt("x", 0), Updates.set("y", 1))),
        DELETE_MANY(() -> new DeleteManyModel<>(Filters.gt("x", 0)));

        /** A new model per test: planning assigns a missing {@code _id} into the caller's document. */
        final Supplier<WriteModel<Document>> model;

        Kind(Supplier<WriteModel<Document>> model) {
            this.model = model;
        }
    }

    /** The first send of a copy, or a resend after a send that got no answer (a socket timeout). */
    enum Send {
        FIRST,
        RESEND
    }

    /**
     * What one copy's sends came to, a row of the table: {@code shape | send | kinds | status | code | retrySafe |
     * counts (inserted matched modified deleted) | stops}. {@code any} send is both; kinds are listed by name.
     */
    private static final String TABLE = """
            # a reply whose statements all ran: APPLIED, with the reply's counts
            ok                   | any    | INSERT INSERT_ASSIGNED_ID                        | APPLIED | 0     | false | 1 0 0 0 | no
            ok                   | any    | UPDATE_ONE_SET UPDATE_ONE_INC UPDATE_MANY        | APPLIED | 0     | false | 0 1 1 0 | no
            ok                   | any    | DELETE_ONE DELETE_MANY                           | APPLIED | 0     | false | 0 0 0 1 | no
            # a write error of the statement's own (validation): FAILED, never retry-safe, the call goes on
            writeError           | any    | INSERT INSERT_ASSIGNED_ID UPDATE_ONE_SET UPDATE_ONE_INC DELETE_ONE UPDATE_MANY DELETE_MANY | FAILED | 121 | false | 0 0 0 0 | no
            # a duplicate key on the _id the guard assigned, after a resend: only the earlier copy can have used it
            duplicateKey         | first  | INSERT INSERT_ASSIGNED_ID UPDATE_ONE_SET UPDATE_ONE_INC DELETE_ONE UPDATE_MANY DELETE_MANY | FAILED | 11000 | false | 0 0 0 0 | no
            duplicateKey         | resend | INSERT UPDATE_ONE_SET UPDATE_ONE_INC DELETE_ONE UPDATE_MANY DELETE_MANY | FAILED | 11000 | false | 0 0 0 0 | no
            duplicateKey         | resend | INSERT_ASSIGNED_ID                               | APPLIED | 0     | false | 0 0 0 0 | no
            # NotWritablePrimary as a statement error: before the write, so FAILED on a first send (transient: retry-safe
            # for a single-document write); after an unanswered send it shows nothing about that send
            notPrimaryWriteError | first  | INSERT INSERT_ASSIGNED_ID UPDATE_ONE_SET UPDATE_ONE_INC DELETE_ONE | FAILED | 10107 | true | 0 0 0 0 | no
            notPrimaryWriteError | first  | UPDATE_MANY DELETE_MANY                          | FAILED  | 10107 | false | 0 0 0 0 | no
            notPrimaryWriteError | resend | INSERT INSERT_ASSIGNED_ID UPDATE_ONE_SET DELETE_ONE | UNKNOWN | 0   | true  | 0 0 0 0 | yes
            notPrimaryWriteError | resend | UPDATE_ONE_INC UPDATE_MANY DELETE_MANY           | UNKNOWN | 0     | false | 0 0 0 0 | yes
            # an interruption as a statement error: proves nothing was applied only for one single-document statement
            interruptedWriteError | first | INSERT INSERT_ASSIGNED_ID UPDATE_ONE_SET UPDATE_ONE_INC DELETE_ONE | FAILED | 11601 | true | 0 0 0 0 | no
            interruptedWriteError | first | UPDATE_MANY DELETE_MANY                          | UNKNOWN | 0     | false | 0 0 0 0 | yes
            interruptedWriteError | resend | INSERT INSERT_ASSIGNED_ID UPDATE_ONE_SET DELETE_ONE | UNKNOWN | 0  | true  | 0 0 0 0 | yes
            interruptedWriteError | resend | UPDATE_ONE_INC UPDATE_MANY DELETE_MANY          | UNKNOWN | 0     | false | 0 0 0 0 | yes
            # MaxTimeMSExpired as a statement error: from a mongod as any interruption; from mongos (its own deadline
            # for a shard's child batch) it proves nothing, the shard may still apply it
            deadlineWriteError   | first  | INSERT INSERT_ASSIGNED_ID UPDATE_ONE_SET UPDATE_ONE_INC DELETE_ONE | FAILED | 50 | true | 0 0 0 0 | no
            deadlineWriteError   | first  | UPDATE_MANY DELETE_MANY                          | UNKNOWN | 0     | false | 0 0 0 0 | yes
            deadlineWriteError   | resend | INSERT INSERT_ASSIGNED_ID UPDATE_ONE_SET DELETE_ONE | UNKNOWN | 0   | true  | 0 0 0 0 | yes
            deadlineWriteError   | resend | UPDATE_ONE_INC UPDATE_MANY DELETE_MANY           | UNKNOWN | 0     | false | 0 0 0 0 | yes
            routerDeadlineWriteError | any | INSERT INSERT_ASSIGNED_ID UPDATE_ONE_SET DELETE_ONE | UNKNOWN | 0   | true  | 0 0 0 0 | yes
            routerDeadlineWriteError | any | UPDATE_ONE_INC UPDATE_MANY DELETE_MANY           | UNKNOWN | 0     | false | 0 0 0 0 | yes
            # Interrupted as a statement error from mongos: a kill of mongos' operation (killOp, killSessions) ends its
            # wait as its deadline does; the shard may still apply it
            routerKilledWriteError | any  | INSERT INSERT_ASSIGNED_ID UPDATE_ONE_SET DELETE_ONE | UNKNOWN | 0   | true  | 0 0 0 0 | yes
            routerKilledWriteError | any  | UPDATE_ONE_INC UPDATE_MANY DELETE_MANY           | UNKNOWN | 0     | false | 0 0 0 0 | yes
            # a stepdown as a statement error may follow the write
            steppedDownWriteError | any   | INSERT INSERT_ASSIGNED_ID UPDATE_ONE_SET DELETE_ONE | UNKNOWN | 0  | true  | 0 0 0 0 | yes
            steppedDownWriteError | any   | UPDATE_ONE_INC UPDATE_MANY DELETE_MANY           | UNKNOWN | 0     | false | 0 0 0 0 | yes
            # mongos lost the shard's answer
            lostAnswer           | any    | INSERT INSERT_ASSIGNED_ID UPDATE_ONE_SET DELETE_ONE | UNKNOWN | 0   | true  | 0 0 0 0 | yes
            lostAnswer           | any    | UPDATE_ONE_INC UPDATE_MANY DELETE_MANY           | UNKNOWN | 0     | false | 0 0 0 0 | yes
            # applied, write concern failed: UNKNOWN (a failover may roll it back), but the call goes on as the driver's
            writeConcernError    | any    | INSERT INSERT_ASSIGNED_ID                        | UNKNOWN | 0     | true  | 1 0 0 0 | no
            writeConcernError    | any    | UPDATE_ONE_SET                                   | UNKNOWN | 0     | true  | 0 1 1 0 | no
            writeConcernError    | any    | UPDATE_ONE_INC UPDATE_MANY                       | UNKNOWN | 0     | false | 0 1 1 0 | no
            writeConcernError    | any    | DELETE_ONE                                       | UNKNOWN | 0     | true  | 0 0 0 1 | no
            writeConcernError    | any    | DELETE_MANY                                      | UNKNOWN | 0     | false | 0 0 0 1 | no
            # a whole-command error before the statements (authorization): FAILED, not retry-safe; after an unanswered
            # send it proves nothing
            unauthorized         | first  | INSERT INSERT_ASSIGNED_ID UPDATE_ONE_SET UPDATE_ONE_INC DELETE_ONE UPDATE_MANY DELETE_MANY | FAILED | 13 | false | 0 0 0 0 | yes
            unauthorized         | resend | INSERT INSERT_ASSIGNED_ID UPDATE_ONE_SET DELETE_ONE | UNKNOWN | 0   | true  | 0 0 0 0 | yes
            unauthorized         | resend | UPDATE_ONE_INC UPDATE_MANY DELETE_MANY           | UNKNOWN | 0     | false | 0 0 0 0 | yes
            # NotWritablePrimary for the whole command: nothing ran; retry-safe for a single-document write
            notPrimary           | first  | INSERT INSERT_ASSIGNED_ID UPDATE_ONE_SET UPDATE_ONE_INC DELETE_ONE | FAILED | 10107 | true | 0 0 0 0 | yes
            notPrimary           | first  | UPDATE_MANY DELETE_MANY                          | FAILED  | 10107 | false | 0 0 0 0 | yes
            notPrimary           | resend | INSERT INSERT_ASSIGNED_ID UPDATE_ONE_SET DELETE_ONE | UNKNOWN | 0   | true  | 0 0 0 0 | yes
            notPrimary           | resend | UPDATE_ONE_INC UPDATE_MANY DELETE_MANY           | UNKNOWN | 0     | false | 0 0 0 0 | yes
            # PrimarySteppedDown for the whole command: may follow the write
            steppedDown          | any    | INSERT INSERT_ASSIGNED_ID UPDATE_ONE_SET DELETE_ONE | UNKNOWN | 0   | true  | 0 0 0 0 | yes
            steppedDown          | any    | UPDATE_ONE_INC UPDATE_MANY DELETE_MANY           | UNKNOWN | 0     | false | 0 0 0 0 | yes
            # an interruption of the whole command: FAILED only for one single-document statement
            interrupted          | first  | INSERT INSERT_ASSIGNED_ID UPDATE_ONE_SET UPDATE_ONE_INC DELETE_ONE | FAILED | 11601 | true | 0 0 0 0 | yes
            interrupted          | first  | UPDATE_MANY DELETE_MANY                          | UNKNOWN | 0     | false | 0 0 0 0 | yes
            interrupted          | resend | INSERT INSERT_ASSIGNED_ID UPDATE_ONE_SET DELETE_ONE | UNKNOWN | 0   | true  | 0 0 0 0 | yes
            interrupted          | resend | UPDATE_ONE_INC UPDATE_MANY DELETE_MANY           | UNKNOWN | 0     | false | 0 0 0 0 | yes
            # MaxTimeMSExpired for the whole command: from a mongod as any interruption; from mongos it proves nothing
            deadline             | first  | INSERT INSERT_ASSIGNED_ID UPDATE_ONE_SET UPDATE_ONE_INC DELETE_ONE | FAILED | 50 | true | 0 0 0 0 | yes
            deadline             | first  | UPDATE_MANY DELETE_MANY                          | UNKNOWN | 0     | false | 0 0 0 0 | yes
            deadline             | resend | INSERT INSERT_ASSIGNED_ID UPDATE_ONE_SET DELETE_ONE | UNKNOWN | 0   | true  | 0 0 0 0 | yes
            deadline             | resend | UPDATE_ONE_INC UPDATE_MANY DELETE_MANY           | UNKNOWN | 0     | false | 0 0 0 0 | yes
            routerDeadline       | any    | INSERT INSERT_ASSIGNED_ID UPDATE_ONE_SET DELETE_ONE | UNKNOWN | 0   | true  | 0 0 0 0 | yes
            routerDeadline       | any    | UPDATE_ONE_INC UPDATE_MANY DELETE_MANY           | UNKNOWN | 0     | false | 0 0 0 0 | yes
            routerKilled         | any    | INSERT INSERT_ASSIGNED_ID UPDATE_ONE_SET DELETE_ONE | UNKNOWN | 0   | true  | 0 0 0 0 | yes
            routerKilled         | any    | UPDATE_ONE_INC UPDATE_MANY DELETE_MANY           | UNKNOWN | 0     | false | 0 0 0 0 | yes
            # the client stopped waiting, the gate refused the resend, or could not see the earlier copy
            gaveUp               | any    | INSERT INSERT_ASSIGNED_ID UPDATE_ONE_SET DELETE_ONE | UNKNOWN | 0   | true  | 0 0 0 0 | yes
            gaveUp               | any    | UPDATE_ONE_INC UPDATE_MANY DELETE_MANY           | UNKNOWN | 0     | false | 0 0 0 0 | yes
            refused              | any    | INSERT INSERT_ASSIGNED_ID UPDATE_ONE_SET DELETE_ONE | UNKNOWN | 0   | true  | 0 0 0 0 | yes
            refused              | any    | UPDATE_ONE_INC UPDATE_MANY DELETE_MANY           | UNKNOWN | 0     | false | 0 0 0 0 | yes
            blind                | any    | INSERT INSERT_ASSIGNED_ID UPDATE_ONE_SET DELETE_ONE | UNKNOWN | 0   | true  | 0 0 0 0 | yes
            blind                | any    | UPDATE_ONE_INC UPDATE_MANY DELETE_MANY           | UNKNOWN | 0     | false | 0 0 0 0 | yes
            # no server: on a first send nothing reached one (FAILED, the client's -3, safe to send again); on a resend
            # the earlier send reached one and may have applied it
            noServer             | first  | INSERT INSERT_ASSIGNED_ID UPDATE_ONE_SET UPDATE_ONE_INC DELETE_ONE UPDATE_MANY DELETE_MANY | FAILED | -3 | true | 0 0 0 0 | yes
            noServer             | resend | INSERT INSERT_ASSIGNED_ID UPDATE_ONE_SET DELETE_ONE | UNKNOWN | 0   | true  | 0 0 0 0 | yes
            noServer             | resend | UPDATE_ONE_INC UPDATE_MANY DELETE_MANY           | UNKNOWN | 0     | false | 0 0 0 0 | yes
            """;

    record Row(
            String shape,
            Send send,
            Kind kind,
            WriteStatus status,
            int code,
            boolean retrySafe,
            List<Integer> counts,
            boolean stops) {
        @Override
        public String toString() {
            return shape + " on " + send + " of " + kind;
        }
    }

    static List<Row> rows() {
        List<Row> rows = new ArrayList<>();
        for (String line : TABLE.lines().toList()) {
            if (line.isBlank() || line.startsWith("#")) {
                continue;
            }
            String[] cells = Arrays.stream(line.split("\\|")).map(String::trim).toArray(String[]::new);
            List<Send> sends =
                    cells[1].equals("any") ? List.of(Send.values()) : List.of(Send.valueOf(cells[1].toUpperCase()));
            for (Send send : sends) {
                for (String kind : cells[2].split("\\s+")) {
                    rows.add(new Row(
                            cells[0],
                            send,
                            Kind.valueOf(kind),
                            WriteStatus.valueOf(cells[3]),
                            Integer.parseInt(cells[4]),
                            Boolean.parseBoolean(cells[5]),
                            Arrays.stream(cells[6].split("\\s+"))
                                    .map(Integer::valueOf)
                                    .toList(),
                            cells[7].equals("yes")));
                }
            }
        }
        return rows;
    }

    static Stream<Row> table() {
        return rows().stream();
    }

    @Test
    void table_namesEveryShapeForEveryKindAndSend_once() {
        List<Row> rows = rows();
        Set<String> shapes = new HashSet<>();
        rows.forEach(row -> shapes.add(row.shape()));
        Set<String> seen = new HashSet<>();
        rows.forEach(
                row -> assertThat(seen.add(row.toString())).as(row + " twice").isTrue());

        assertThat(rows).hasSize(shapes.size() * Kind.values().length * Send.values().length);
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("table")
    void replyShape_toOutcome(Row row) {
        List<WriteModel<Document>> models = List.of(row.kind().model.get());
        PlannedBulk plan = BulkPlanner.of(Document.class, REGISTRY).plan(models, PlanOptions.ordered());
        WriteCommand command = new WriteCommandEncoder<>("stock", Document.class, REGISTRY)
                .encode(plan, List.of(0), true, CommandOptions.NONE)
                .get(0);
        RecordedWriteOutcome.Builder<Document> builder = new RecordedWriteOutcome.Builder<>(models);

        ClientBinding binding = row.shape().startsWith("router") ? MONGOS : MONGOD;
        String stop = new OutcomeRecorder<>(plan, builder, REGISTRY, binding).record(command, sent(row, command));

        IndexOutcome outcome = builder.get(0);
        WriteOutcome<Document> result = builder.build();
        assertThat(outcome.status()).as("status").isEqualTo(row.status());
        assertThat(outcome.errorCode()).as("code").isEqualTo(row.code());
        assertThat(outcome.retrySafe()).as("retrySafe").isEqualTo(row.retrySafe());
        assertThat(List.of(
                        result.insertedCount(), result.matchedCount(), result.modifiedCount(), result.deletedCount()))
                .as("counts")
                .isEqualTo(row.counts());
        assertThat(stop != null).as("stops: " + stop).isEqualTo(row.stops());
        if (row.shape().startsWith("routerDeadline") && row.send() == Send.FIRST) {
            assertThat(outcome.message())
                    .as("the reason names mongos' deadline and the server's message")
                    .contains("mongos answered MaxTimeMSExpired (50: Write results unavailable from shard0")
                    .contains("may still apply the write");
        }
    }

    /** A failed ORDERED statement: the ones after it were not run, unless an interruption may have run them. */
    @Test
    void orderedCommand_afterAFailedStatement_skipsTheRest_butAfterAnInterruption_leavesThemUnknown() {
        assertThat(secondOfTwoAfterFirstFails(121)).isEqualTo(WriteStatus.SKIPPED);
        assertThat(secondOfTwoAfterFirstFails(11601)).isEqualTo(WriteStatus.UNKNOWN);
    }

    private static WriteStatus secondOfTwoAfterFirstFails(int code) {
        List<WriteModel<Document>> models =
                List.of(Kind.INSERT.model.get(), new InsertOneModel<>(new Document("_id", 2)));
        PlannedBulk plan = BulkPlanner.of(Document.class, REGISTRY).plan(models, PlanOptions.ordered());
        WriteCommand command = new WriteCommandEncoder<>("stock", Document.class, REGISTRY)
                .encode(plan, List.of(0, 1), true, CommandOptions.NONE)
                .get(0);
        RecordedWriteOutcome.Builder<Document> builder = new RecordedWriteOutcome.Builder<>(models);
        BsonDocument reply = BsonDocument.parse(
                "{ok: 1, n: 0, writeErrors: [{index: 0, code: " + code + ", codeName: 'E', errmsg: 'e'}]}");

        new OutcomeRecorder<>(plan, builder, REGISTRY)
                .record(command, new CopySender.Sent(SendResult.reply(raw(reply)), false, true, false, List.of()));

        return builder.get(1).status();
    }

    private static CopySender.Sent sent(Row row, WriteCommand command) {
        SendResult result = result(row.shape(), command);
        boolean firstReachedNoServer = row.send() == Send.FIRST && row.shape().equals("noServer");
        return row.send() == Send.FIRST
                ? new CopySender.Sent(result, false, !firstReachedNoServer, false, List.of())
                : new CopySender.Sent(result, true, true, true, List.of());
    }

    private static SendResult result(String shape, WriteCommand command) {
        boolean update = command.type() == WriteCommand.CommandType.UPDATE;
        String counts = update ? "n: 1, nModified: 1" : "n: 1";
        return switch (shape) {
            case "ok" -> SendResult.reply(raw(BsonDocument.parse("{ok: 1, " + counts + "}")));
            case "writeError" -> writeError(121, "DocumentValidationFailure");
            case "duplicateKey" -> writeError(11000, "DuplicateKey");
            case "notPrimaryWriteError" -> writeError(10107, "NotWritablePrimary");
            case "interruptedWriteError" -> writeError(11601, "Interrupted");
            case "deadlineWriteError" -> writeError(50, "MaxTimeMSExpired");
            case "routerDeadlineWriteError" ->
                SendResult.reply(raw(BsonDocument.parse("{ok: 1, n: 0, writeErrors: [{index: 0, code: 50,"
                        + " codeName: 'MaxTimeMSExpired', errmsg: '" + ROUTER_DEADLINE_MESSAGE + "'}]}")));
            case "routerKilledWriteError" ->
                SendResult.reply(raw(BsonDocument.parse("{ok: 1, n: 0, writeErrors: [{index: 0, code: 11601,"
                        + " codeName: 'Interrupted', errmsg: '" + ROUTER_KILLED_MESSAGE + "'}]}")));
            case "steppedDownWriteError" -> writeError(189, "PrimarySteppedDown");
            case "lostAnswer" -> writeError(6, "HostUnreachable");
            case "writeConcernError" ->
                SendResult.reply(raw(BsonDocument.parse("{ok: 1, " + counts
                        + ", writeConcernError: {code: 64, codeName: 'WriteConcernFailed', errmsg: 'w'}}")));
            case "unauthorized" -> SendResult.serverError(commandError(13, "Unauthorized"));
            case "notPrimary" -> SendResult.serverError(commandError(10107, "NotWritablePrimary"));
            case "steppedDown" -> SendResult.serverError(commandError(189, "PrimarySteppedDown"));
            case "interrupted" -> SendResult.serverError(commandError(11601, "Interrupted"));
            case "deadline" -> SendResult.serverError(commandError(50, "MaxTimeMSExpired"));
            case "routerDeadline" ->
                SendResult.serverError(new MongoCommandException(
                        BsonDocument.parse("{ok: 0, code: 50, codeName: 'MaxTimeMSExpired', errmsg: '"
                                + ROUTER_DEADLINE_MESSAGE + "'}"),
                        new ServerAddress()));
            case "routerKilled" ->
                SendResult.serverError(new MongoCommandException(
                        BsonDocument.parse("{ok: 0, code: 11601, codeName: 'Interrupted', errmsg: '"
                                + ROUTER_KILLED_MESSAGE + "'}"),
                        new ServerAddress()));
            case "gaveUp" -> gaveUp();
            case "refused" -> gaveUp().refused(runningCopy());
            case "blind" -> gaveUp().blind();
            case "noServer" -> SendResult.noServer(new MongoTimeoutException("no server"));
            default -> throw new IllegalArgumentException("no reply shape " + shape);
        };
    }

    private static SendResult writeError(int code, String codeName) {
        return SendResult.reply(raw(BsonDocument.parse("{ok: 1, n: 0, writeErrors: [{index: 0, code: " + code
                + ", codeName: '" + codeName + "', errmsg: 'e'}]}")));
    }

    private static SendResult gaveUp() {
        return SendResult.gaveUp(new MongoSocketReadTimeoutException("timed out", new ServerAddress(), null));
    }

    private static MongoCommandException commandError(int code, String codeName) {
        return new MongoCommandException(
                BsonDocument.parse("{ok: 0, code: " + code + ", codeName: '" + codeName + "', errmsg: 'e'}"),
                new ServerAddress());
    }

    private static CopyRecord runningCopy() {
        return new CopyRecord("db.stock", "lsid", 1L, null, 1, 1, Instant.EPOCH, true, null, 0);
    }

    private static RawBsonDocument raw(BsonDocument document) {
        return new RawBsonDocument(document, new org.bson.codecs.BsonDocumentCodec());
    }
}
