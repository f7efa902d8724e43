package io.github.mongowriteguard.internal.execution;

import com.mongodb.client.model.bulk.ClientBulkWriteResult;
import com.mongodb.client.model.bulk.ClientBulkWriteResult.VerboseResults;
import com.mongodb.client.model.bulk.ClientDeleteResult;
import com.mongodb.client.model.bulk.ClientInsertOneResult;
import com.mongodb.client.model.bulk.ClientUpdateResult;
import com.mongodb.internal.client.model.bulk.ConcreteClientDeleteResult;
import com.mongodb.internal.client.model.bulk.ConcreteClientInsertOneResult;
import com.mongodb.internal.client.model.bulk.ConcreteClientUpdateResult;
import io.github.mongowriteguard.outcome.IndexOutcome;
import io.github.mongowriteguard.outcome.WriteOutcome;
import java.util.Collections;
import java.util.HashMap;
import java.util.Map;
import java.util.Optional;
import java.util.TreeMap;
import org.bson.BsonValue;
import org.jspecify.annotations.Nullable;

/**
 * A client-level bulk's outcome as the driver's {@link ClientBulkWriteResult}: what {@code GuardedClient.bulkWrite}
 * returns, and the partial result of the {@code ClientBulkWriteException} it throws when some write applied
 * ({@link DriverExceptions}). Not API.
 */
public final class ClientBulkResults {
    private ClientBulkResults() {}

    /**
     * The counts of what the server applied and, with {@code verboseResults}, each applied write's own result.
     *
     * @param outcome        the call's outcome, at the indices of the caller's list
     * @param verboseResults the caller asked for {@code verboseResults(true)}
     * @return the driver's result type
     */
    public static ClientBulkWriteResult of(WriteOutcome<?> outcome, boolean verboseResults) {
        return new Summary(
                outcome.insertedCount(),
                outcome.upserts().size(),
                outcome.matchedCount(),
                outcome.modifiedCount(),
                outcome.deletedCount(),
                verboseResults ? verbose(outcome) : null);
    }

    /**
     * Each applied write's own result at its index of the caller's list, as the driver's verbose result holds it
     * (driver-core {@code ClientBulkWriteOperation.ResultAccumulator}): an insert's {@code _id}; an update's or
     * replacement's {@code n} as its matched count (an upsert counts 1), {@code nModified} and upserted {@code _id}; a
     * delete's {@code n}. Each update and delete was sent alone, so its command's counts are its own.
     */
    private static VerboseResults verbose(WriteOutcome<?> outcome) {
        Map<Integer, ClientInsertOneResult> inserts = new TreeMap<>();
        Map<Integer, ClientUpdateResult> updates = new TreeMap<>();
        Map<Integer, ClientDeleteResult> deletes = new TreeMap<>();
        outcome.inserts()
                .forEach(insert -> inserts.put(insert.getIndex(), new ConcreteClientInsertOneResult(insert.getId())));
        Map<Integer, BsonValue> upserted = new HashMap<>();
        outcome.upserts().forEach(upsert -> upserted.put(upsert.getIndex(), upsert.getId()));
        for (IndexOutcome index : outcome.outcomes()) {
            WriteOutcome.StatementCounts counts = outcome.statementCounts(index.index());
            if (counts == null) {
                continue;
            }
            if (counts.delete()) {
                deletes.put(index.index(), new ConcreteClientDeleteResult(counts.n()));
            } else {
                updates.put(
                        index.index(),
                        new ConcreteClientUpdateResult(counts.n(), counts.modified(), upserted.get(index.index())));
            }
        }
        return new Verbose(
                Collections.unmodifiableMap(inserts),
                Collections.unmodifiableMap(updates),
                Collections.unmodifiableMap(deletes));
    }

    /** The per-write results of a verbose client bulk. */
    private record Verbose(
            Map<Integer, ClientInsertOneResult> getInsertResults,
            Map<Integer, ClientUpdateResult> getUpdateResults,
            Map<Integer, ClientDeleteResult> getDeleteResults)
            implements VerboseResults {}

    /** The counts of an acknowledged client bulk, as the driver's summary result reports them. */
    private record Summary(
            long insertedCount,
            long upsertedCount,
            long matchedCount,
            long modifiedCount,
            long deletedCount,
            @Nullable VerboseResults verbose)
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
            return Optional.ofNullable(verbose);
        }
    }
}
