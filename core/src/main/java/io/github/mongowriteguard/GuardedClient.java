package io.github.mongowriteguard;

import java.util.List;
import java.util.Objects;
import java.util.Optional;

import org.bson.BsonDocument;
import org.jspecify.annotations.Nullable;

import com.mongodb.client.ClientSession;
import com.mongodb.client.MongoClient;
import com.mongodb.client.model.bulk.ClientBulkWriteOptions;
import com.mongodb.client.model.bulk.ClientBulkWriteResult;
import com.mongodb.client.model.bulk.ClientNamespacedWriteModel;

import io.github.mongowriteguard.internal.execution.ClientBulkExecutor;
import io.github.mongowriteguard.outcome.WriteOutcome;

/**
 * The driver's client-level bulk write ({@code MongoClient.bulkWrite}: several namespaces in one call), guarded.
 * Obtained from {@link WriteGuard#wrap(MongoClient)}.
 *
 * <p>Keys are (namespace, {@code _id}); each namespace's writes are planned and run as the collection-level
 * {@link GuardedCollection#bulkWrite} of those writes (rounds, per-key order, per-key failures for an ORDERED call
 * of keyed writes; the server deadline, one server copy per command, same-copy retries). An ORDERED call with an
 * unkeyed write (an {@code updateMany}, a {@code deleteMany}, a filter on other fields) or under
 * {@code strictOrdered} keeps the caller's order across namespaces and stops at the first write that does not
 * apply, as the driver's ORDERED client bulk does. Everything is checked before anything is sent.
 *
 * <p>The guard sends {@code insert}/{@code update}/{@code delete} commands, not server 8.0's {@code bulkWrite}
 * command, so it also works against servers before 8.0 (where the driver refuses). {@code verboseResults(true)} is
 * refused (those commands count matched and modified documents per command, not per write); {@link #execute} gives
 * the status of every write. Inside a multi-document transaction the call is the driver's own.
 */
public final class GuardedClient {
    private final MongoClient client;
    private final ClientBulkExecutor executor;

    GuardedClient(MongoClient client, ClientBulkExecutor executor) {
        this.client = client;
        this.executor = executor;
    }

    /** The driver's client, for everything else (and unguarded writes). */
    public MongoClient unwrap() {
        return client;
    }

    /** As {@code MongoClient.bulkWrite(List)}, guarded: ORDERED. */
    public ClientBulkWriteResult bulkWrite(List<? extends ClientNamespacedWriteModel> models) {
        return bulkWrite(models, ClientBulkWriteOptions.clientBulkWriteOptions());
    }

    /**
     * As {@code MongoClient.bulkWrite(List, ClientBulkWriteOptions)}, guarded.
     *
     * @throws com.mongodb.ClientBulkWriteException when writes failed (indices of the caller's list) or a write-concern
     *                                              error was reported, or a whole command failed after some write
     *                                              applied (its cause); the partial result when some write applied
     * @throws io.github.mongowriteguard.deadline.WriteOutcomeUnknownException when nothing proves whether some write
     *                                              was applied; its {@code outcome()} has every index
     * @throws io.github.mongowriteguard.copies.CopyStillRunningException when a retry was refused because a copy still
     *                                              runs on the server
     * @throws io.github.mongowriteguard.deadline.ServerDeadlineExceededException when the server stopped a command at
     *                                              the guard's deadline
     * @throws com.mongodb.MongoCommandException    when a whole command failed before any write applied: the
     *                                              driver's own exception
     * @throws IllegalArgumentException             for input the guard refuses, before anything is sent
     *                                              ({@link io.github.mongowriteguard.bulk.InvalidBulkException},
     *                                              {@code verboseResults(true)})
     */
    public ClientBulkWriteResult bulkWrite(List<? extends ClientNamespacedWriteModel> models, ClientBulkWriteOptions options) {
        return run(null, models, options);
    }

    public ClientBulkWriteResult bulkWrite(ClientSession session, List<? extends ClientNamespacedWriteModel> models) {
        return bulkWrite(session, models, ClientBulkWriteOptions.clientBulkWriteOptions());
    }

    /**
     * As {@code MongoClient.bulkWrite(ClientSession, List, ClientBulkWriteOptions)}: guarded on the caller's session;
     * inside a multi-document transaction, the driver's own call.
     */
    public ClientBulkWriteResult bulkWrite(ClientSession session, List<? extends ClientNamespacedWriteModel> models,
                                           ClientBulkWriteOptions options) {
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
     */
    public WriteOutcome<BsonDocument> execute(List<? extends ClientNamespacedWriteModel> models, ClientBulkWriteOptions options) {
        return executor.execute(null, models, ClientBulkExecutor.options(options));
    }

    private ClientBulkWriteResult run(@Nullable ClientSession session, List<? extends ClientNamespacedWriteModel> models,
                                      ClientBulkWriteOptions options) {
        WriteOutcome<BsonDocument> outcome = executor.execute(session, models, ClientBulkExecutor.options(options));
        ClientBulkWriteResult result = new Summary(outcome.insertedCount(), outcome.upserts().size(), outcome.matchedCount(),
            outcome.modifiedCount(), outcome.deletedCount());
        DriverExceptions.throwIfClientBulkNotComplete(outcome, "the namespaces of a client bulk", executor.maxTimeMs(), result);
        return result;
    }

    /** The counts of an acknowledged client bulk, as the driver's summary result reports them. */
    private record Summary(long insertedCount, long upsertedCount, long matchedCount, long modifiedCount, long deletedCount)
        implements ClientBulkWriteResult {
        @Override
        public boolean isAcknowledged() {
            return true;
        }

        @Override
        public long getInsertedCount() {
            return insertedCount;
        }

        @Override
        public long getUpsertedCount() {
            return upsertedCount;
        }

        @Override
        public long getMatchedCount() {
            return matchedCount;
        }

        @Override
        public long getModifiedCount() {
            return modifiedCount;
        }

        @Override
        public long getDeletedCount() {
            return deletedCount;
        }

        @Override
        public Optional<VerboseResults> getVerboseResults() {
            return Optional.empty();
        }
    }
}
