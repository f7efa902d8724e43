package io.github.mongowriteguard;

import com.mongodb.client.ClientSession;
import com.mongodb.client.MongoClient;
import com.mongodb.client.model.bulk.ClientBulkWriteOptions;
import com.mongodb.client.model.bulk.ClientBulkWriteResult;
import com.mongodb.client.model.bulk.ClientNamespacedWriteModel;
import io.github.mongowriteguard.internal.execution.ClientBulkExecutor;
import io.github.mongowriteguard.internal.execution.ClientBulkResults;
import io.github.mongowriteguard.internal.execution.DriverArgumentChecks;
import io.github.mongowriteguard.internal.execution.GuardedCall;
import io.github.mongowriteguard.internal.execution.ThrowPolicy;
import io.github.mongowriteguard.outcome.WriteOutcome;
import java.util.List;
import java.util.Objects;
import org.bson.BsonDocument;
import org.jspecify.annotations.Nullable;

/**
 * The driver's client-level bulk write ({@code MongoClient.bulkWrite}: several namespaces in one call), guarded.
 * Obtained from {@link WriteGuard#guardClient(MongoClient)}.
 *
 * <p>Keys are (namespace, {@code _id}); each namespace's writes are planned and run as the collection-level
 * {@link GuardedCollection#bulkWrite} of those writes (rounds, per-key order, per-key failures for an ORDERED call
 * of keyed writes; the server deadline, one server copy per command, same-copy retries). An ORDERED call with an
 * unkeyed write (an {@code updateMany}, a {@code deleteMany}, a filter on other fields) or under
 * {@code strictOrdered} keeps the caller's order across namespaces and stops at the first write that does not
 * apply, as the driver's ORDERED client bulk does. Everything is checked before anything is sent.
 *
 * <p>The guard sends {@code insert}/{@code update}/{@code delete} commands, not server 8.0's {@code bulkWrite}
 * command, so it also works against servers before 8.0 (where the driver refuses). Those commands count matched,
 * modified and deleted documents per command, so with {@code verboseResults(true)} every update, replace and delete
 * is sent in a command of its own (inserts are grouped as usual: their ids are known), and the result holds each
 * applied write's own insert, update or delete result, as the driver's does. {@link #execute} gives the status of
 * every write. Inside a multi-document transaction the call is the driver's own.
 *
 * <p>With the guard's {@code ObservationRegistry}, a call is one observation on namespace {@code admin} (where the
 * driver runs it), which records what the call throws; each namespace's writes have their own observation inside it,
 * and their own {@code mongodb.guard.*} meters, as a collection-level bulk of those writes.
 */
public final class GuardedClient {
    private final MongoClient client;
    private final ClientBulkExecutor executor;

    GuardedClient(MongoClient client, ClientBulkExecutor executor) {
        this.client = client;
        this.executor = executor;
    }

    /**
     * The driver's client, for everything else (and unguarded writes).
     *
     * @return the client this guarded client wraps
     */
    public MongoClient unwrap() {
        return client;
    }

    /**
     * As {@code MongoClient.bulkWrite(List)}, guarded: ORDERED, with the driver's default options; throws as
     * {@link #bulkWrite(List, ClientBulkWriteOptions)}.
     *
     * @param models the writes, each with its namespace
     * @return the counts of what the server applied
     */
    public ClientBulkWriteResult bulkWrite(List<? extends ClientNamespacedWriteModel> models) {
        return bulkWrite(models, ClientBulkWriteOptions.clientBulkWriteOptions());
    }

    /**
     * As {@code MongoClient.bulkWrite(List, ClientBulkWriteOptions)}, guarded.
     *
     * @param models  the writes, each with its namespace
     * @param options the driver's options (ordered, verbose results, comment, let, ...)
     * @return the counts of what the server applied, and each write's own result with {@code verboseResults(true)}
     * @throws com.mongodb.ClientBulkWriteException when writes failed (indices of the caller's list) or a write-concern
     *                                              error was reported, or a whole command failed after some write
     *                                              applied (its cause); the partial result when some write applied
     * @throws io.github.mongowriteguard.exception.WriteOutcomeUnknownException when nothing proves whether some write
     *                                              was applied; its {@code outcome()} has every index
     * @throws io.github.mongowriteguard.exception.CopyStillRunningException when a retry was refused because a copy still
     *                                              runs on the server
     * @throws io.github.mongowriteguard.exception.ServerDeadlineExceededException when the server stopped a command at
     *                                              the guard's deadline
     * @throws com.mongodb.MongoCommandException    when a whole command failed before any write applied: the
     *                                              driver's own exception
     * @throws IllegalArgumentException             for input the guard refuses, before anything is sent
     *                                              ({@link io.github.mongowriteguard.exception.InvalidBulkException})
     */
    public ClientBulkWriteResult bulkWrite(
            List<? extends ClientNamespacedWriteModel> models, ClientBulkWriteOptions options) {
        return run(null, models, options);
    }

    /**
     * As {@code MongoClient.bulkWrite(ClientSession, List)}: guarded on the caller's session, ORDERED, with the
     * driver's default options; inside a multi-document transaction, the driver's own call.
     *
     * @param session the caller's session
     * @param models  the writes, each with its namespace
     * @return the counts of what the server applied
     */
    public ClientBulkWriteResult bulkWrite(ClientSession session, List<? extends ClientNamespacedWriteModel> models) {
        return bulkWrite(session, models, ClientBulkWriteOptions.clientBulkWriteOptions());
    }

    /**
     * As {@code MongoClient.bulkWrite(ClientSession, List, ClientBulkWriteOptions)}: guarded on the caller's session;
     * inside a multi-document transaction, the driver's own call. Throws as
     * {@link #bulkWrite(List, ClientBulkWriteOptions)}.
     *
     * @param session the caller's session
     * @param models  the writes, each with its namespace
     * @param options the driver's options
     * @return the counts of what the server applied, and each write's own result with {@code verboseResults(true)}
     */
    public ClientBulkWriteResult bulkWrite(
            ClientSession session, List<? extends ClientNamespacedWriteModel> models, ClientBulkWriteOptions options) {
        Objects.requireNonNull(session, "session");
        if (session.hasActiveTransaction()) {
            return client.bulkWrite(session, models, options);
        }
        return run(session, models, options);
    }

    /**
     * Runs the call and returns every write's outcome, at the indices of the caller's list; never throws for write
     * errors. Its models ({@code notApplied()}) are the collection-level models of the caller's writes, with the
     * documents encoded as the client encodes them.
     *
     * @param models  the writes, each with its namespace
     * @param options the driver's options
     * @return the outcome of every write and the counts of what the server applied
     * @throws IllegalArgumentException for input the guard refuses, before anything is sent
     */
    public WriteOutcome<BsonDocument> execute(
            List<? extends ClientNamespacedWriteModel> models, ClientBulkWriteOptions options) {
        return executor.execute(ClientBulkExecutor.call(null, options, ThrowPolicy.OUTCOME_ONLY), models);
    }

    private ClientBulkWriteResult run(
            @Nullable ClientSession session,
            List<? extends ClientNamespacedWriteModel> models,
            ClientBulkWriteOptions options) {
        DriverArgumentChecks.requireClientWrites(models);
        GuardedCall call = ClientBulkExecutor.call(session, options, ThrowPolicy.CLIENT_BULK);
        return ClientBulkResults.of(executor.execute(call, models), call.statementCounts());
    }
}
