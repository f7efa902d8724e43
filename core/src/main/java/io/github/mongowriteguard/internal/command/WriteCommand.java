package io.github.mongowriteguard.internal.command;

import org.jspecify.annotations.Nullable;
import java.util.Arrays;

import org.bson.BsonArray;
import org.bson.BsonDocument;
import org.bson.BsonInt64;
import org.bson.BsonString;
import org.bson.BsonValue;

/**
 * One {@code insert}, {@code update} or {@code delete} command the guard sends itself, with the map from its
 * statement positions back to the caller's bulk indices.
 *
 * <p>The guard sends write commands itself (through {@code runCommand} on an explicit session) instead of calling
 * {@code bulkWrite}, because only then can it choose the {@code maxTimeMS} and the {@code (lsid, txnNumber)} of
 * every send: a resend with the same transaction number is the same server copy, never a new one.
 */
public final class WriteCommand {
    /** The kind of a write command. */
    public enum Kind {
        INSERT("insert", "documents"), UPDATE("update", "updates"), DELETE("delete", "deletes");

        private final String commandName;
        private final String statementsField;

        Kind(String commandName, String statementsField) {
            this.commandName = commandName;
            this.statementsField = statementsField;
        }

        public String commandName() {
            return commandName;
        }

        String statementsField() {
            return statementsField;
        }
    }

    private final Kind kind;
    private final String collection;
    private final boolean ordered;
    private final BsonArray statements;
    private final int[] indices;
    private final boolean retryable;

    WriteCommand(Kind kind, String collection, boolean ordered, BsonArray statements, int[] indices, boolean retryable) {
        this.kind = kind;
        this.collection = collection;
        this.ordered = ordered;
        this.statements = statements;
        this.indices = indices;
        this.retryable = retryable;
    }

    public Kind kind() {
        return kind;
    }

    public boolean ordered() {
        return ordered;
    }

    /** Number of statements (writes) in the command. */
    public int size() {
        return indices.length;
    }

    /** The caller's bulk index of the statement at {@code position}. */
    public int index(int position) {
        return indices[position];
    }

    /**
     * True when every statement touches at most one document, so the command may carry a {@code txnNumber} and be
     * resent as the same copy. Multi-document updates and deletes are never retryable.
     */
    public boolean retryable() {
        return retryable;
    }

    /**
     * The command as sent.
     *
     * @param txnNumber    the transaction number, or null for a non-retryable command
     * @param maxTimeMs    the server deadline
     * @param writeConcern the collection's write concern as a document, or null for the server default
     * @param comment      a comment that names the guarded write (servers 4.4+), or null
     */
    public BsonDocument toCommand(@Nullable Long txnNumber, long maxTimeMs, @Nullable BsonDocument writeConcern,
                                  @Nullable BsonValue comment) {
        BsonDocument command = new BsonDocument(kind.commandName(), new BsonString(collection))
            .append("ordered", org.bson.BsonBoolean.valueOf(ordered))
            .append(kind.statementsField(), statements)
            .append("maxTimeMS", new BsonInt64(maxTimeMs));
        if (txnNumber != null) {
            command.append("txnNumber", new BsonInt64(txnNumber));
        }
        if (writeConcern != null && !writeConcern.isEmpty()) {
            command.append("writeConcern", writeConcern);
        }
        if (comment != null) {
            command.append("comment", comment);
        }
        return command;
    }

    @Override
    public String toString() {
        return kind.commandName() + "(" + indices.length + " statements, ordered=" + ordered + ", retryable=" + retryable
            + ", indices=" + (indices.length <= 8 ? Arrays.toString(indices) : indices[0] + ".." + indices[indices.length - 1]) + ")";
    }
}
