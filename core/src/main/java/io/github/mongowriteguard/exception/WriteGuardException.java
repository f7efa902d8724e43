package io.github.mongowriteguard.exception;

import com.mongodb.MongoClientException;
import io.github.mongowriteguard.outcome.WriteOutcome;
import org.jspecify.annotations.Nullable;

/**
 * The base of the guard's typed exceptions. It is a {@link com.mongodb.MongoException}, so existing
 * {@code catch (MongoException e)} blocks keep catching it; {@link #outcome()} says what became of every write.
 */
public class WriteGuardException extends MongoClientException {
    private static final long serialVersionUID = 1L;
    private final transient @Nullable WriteOutcome<?> outcome;

    /**
     * A guard exception with the outcome of the call.
     *
     * @param message what happened, and what the caller can do
     * @param outcome what became of every write of the call, or null before planning
     */
    public WriteGuardException(String message, @Nullable WriteOutcome<?> outcome) {
        super(message);
        this.outcome = outcome;
    }

    /** {@return what became of every write of the guarded call (null only for exceptions raised before planning)} */
    public @Nullable WriteOutcome<?> outcome() {
        return outcome;
    }
}
