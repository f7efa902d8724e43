package io.github.mongowriteguard.exception;

import com.mongodb.MongoBulkWriteException;
import com.mongodb.ServerAddress;
import com.mongodb.bulk.BulkWriteError;
import com.mongodb.bulk.WriteConcernError;
import io.github.mongowriteguard.outcome.WriteOutcome;
import java.util.List;
import java.util.Set;
import org.jspecify.annotations.Nullable;

/**
 * The driver's {@link MongoBulkWriteException} (so existing catch blocks and Spring's exception translation keep
 * working), with every write error at the index the write had in the caller's bulk, and the complete
 * {@link #outcome()}: which writes were applied, superseded, skipped, failed or unknown.
 */
public final class GuardedBulkWriteException extends MongoBulkWriteException {
    private static final long serialVersionUID = 1L;
    private final transient WriteOutcome<?> outcome;

    /**
     * The driver's exception for {@code outcome}.
     *
     * @param outcome           the complete outcome of the call
     * @param errors            every write error, at the caller's indices
     * @param writeConcernError the first write-concern error, or null
     * @param serverAddress     the server that answered
     * @param errorLabels       the error labels of the replies
     */
    public GuardedBulkWriteException(
            WriteOutcome<?> outcome,
            List<BulkWriteError> errors,
            @Nullable WriteConcernError writeConcernError,
            ServerAddress serverAddress,
            Set<String> errorLabels) {
        super(outcome.toBulkWriteResult(), errors, writeConcernError, serverAddress, errorLabels);
        this.outcome = outcome;
    }

    /**
     * What the call did, index by index.
     *
     * @return the complete outcome
     */
    public WriteOutcome<?> outcome() {
        return outcome;
    }
}
