package io.github.mongowriteguard.exception;

import com.mongodb.MongoWriteConcernException;
import com.mongodb.ServerAddress;
import com.mongodb.WriteConcernResult;
import com.mongodb.bulk.WriteConcernError;
import io.github.mongowriteguard.outcome.WriteOutcome;
import java.util.Collection;

/**
 * The driver's {@link MongoWriteConcernException} (so existing catch blocks and Spring's exception translation keep
 * working) for a single-write method or a {@code findOneAndX} whose write the primary applied but whose write concern
 * failed: the write is applied unless a failover rolls it back before it replicates. {@link #outcome()} says so per
 * write ({@code UNKNOWN} with {@code writeConcernFailed()}), with whether a new copy is safe.
 */
public final class GuardedWriteConcernException extends MongoWriteConcernException {
    private static final long serialVersionUID = 1L;
    private final transient WriteOutcome<?> outcome;

    /**
     * The driver's exception for {@code outcome}.
     *
     * @param outcome           the complete outcome of the call
     * @param writeConcernError the write-concern error
     * @param writeResult       what the write did, as the driver reports it
     * @param serverAddress     the server that answered
     * @param errorLabels       the error labels of the reply
     */
    public GuardedWriteConcernException(
            WriteOutcome<?> outcome,
            WriteConcernError writeConcernError,
            WriteConcernResult writeResult,
            ServerAddress serverAddress,
            Collection<String> errorLabels) {
        super(writeConcernError, writeResult, serverAddress, errorLabels);
        this.outcome = outcome;
    }

    /**
     * What the call did.
     *
     * @return the complete outcome
     */
    public WriteOutcome<?> outcome() {
        return outcome;
    }
}
