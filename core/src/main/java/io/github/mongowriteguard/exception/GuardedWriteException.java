package io.github.mongowriteguard.exception;

import com.mongodb.MongoWriteException;
import com.mongodb.ServerAddress;
import com.mongodb.WriteError;
import io.github.mongowriteguard.outcome.WriteOutcome;
import java.util.Collection;

/**
 * The driver's {@link MongoWriteException} (so existing catch blocks, such as one for a duplicate key, and Spring's
 * exception translation keep working) for a single-write method whose write failed after it may have changed
 * documents: a multi-document write ({@code updateMany}, {@code deleteMany}) is not atomic, and what it changed before
 * the error stays changed. The driver throws its plain exception there; {@link #outcome()} says what the call did
 * ({@code IndexOutcome.mayHaveChangedDocuments()}, the counts the server reported).
 */
public final class GuardedWriteException extends MongoWriteException {
    private static final long serialVersionUID = 1L;
    private final transient WriteOutcome<?> outcome;

    /**
     * The driver's exception for {@code outcome}.
     *
     * @param outcome       the complete outcome of the call
     * @param error         the write's error
     * @param serverAddress the server that answered
     * @param errorLabels   the error labels of the reply
     */
    public GuardedWriteException(
            WriteOutcome<?> outcome, WriteError error, ServerAddress serverAddress, Collection<String> errorLabels) {
        super(error, serverAddress, errorLabels);
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
