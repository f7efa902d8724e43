package io.github.mongowriteguard.exception;

import com.mongodb.MongoClientException;
import io.github.mongowriteguard.outcome.StaleReadDiagnosis;

/**
 * The normal (exact) read failed with a signal of stale routing metadata ({@code StaleConfig}, or a timeout on
 * the way), and no approximate answer was allowed. It is a {@link com.mongodb.MongoException}, so existing
 * {@code catch (MongoException e)} blocks keep catching it; {@link #getCause()} is the driver's exception and
 * {@link #diagnosis()} says which shard and node, and why.
 */
public class ExactReadUnavailableException extends MongoClientException {
    private static final long serialVersionUID = 1L;
    private final transient StaleReadDiagnosis diagnosis;

    /**
     * The exact read failed with a signal of stale routing metadata.
     *
     * @param message   what failed
     * @param diagnosis what the signals say: which shard and node, and why
     * @param cause     the driver's exception
     */
    public ExactReadUnavailableException(String message, StaleReadDiagnosis diagnosis, Throwable cause) {
        super(message + ": " + diagnosis.message(), cause);
        this.diagnosis = diagnosis;
    }

    /** {@return which shard and node, and why} */
    public StaleReadDiagnosis diagnosis() {
        return diagnosis;
    }
}
