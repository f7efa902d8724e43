package io.github.mongowriteguard.internal.command;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import org.bson.BsonArray;
import org.bson.BsonDocument;
import org.bson.BsonElement;
import org.bson.BsonInt64;
import org.bson.BsonValue;
import org.jspecify.annotations.Nullable;

/**
 * One {@code insert}, {@code update} or {@code delete} command the guard sends itself, with the map from its
 * statement positions back to the caller's bulk indices.
 *
 * <p>The guard sends write commands itself (through {@code runCommand} on an explicit session) instead of calling
 * {@code bulkWrite}, because only then can it choose the {@code maxTimeMS} and the {@code (lsid, txnNumber)} of
 * every send: a resend with the same transaction number is the same server copy, never a new one.
 */
public final class WriteCommand {
    /** Which write command: insert, update or delete. */
    public enum CommandType {
        INSERT("insert", "documents"),
        UPDATE("update", "updates"),
        DELETE("delete", "deletes");

        private final String commandName;
        private final String statementsField;

        CommandType(String commandName, String statementsField) {
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

    private final CommandType type;
    private final String collection;
    private final boolean ordered;
    /** The command's fields and statements, before the per-send fields. */
    private final CommandBody body;

    private final int[] indices;
    private final boolean retryable;

    WriteCommand(
            CommandType type, String collection, boolean ordered, CommandBody body, int[] indices, boolean retryable) {
        this.type = type;
        this.collection = collection;
        this.ordered = ordered;
        this.body = body;
        this.indices = indices;
        this.retryable = retryable;
    }

    public CommandType type() {
        return type;
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
     * The command as sent: its fields and statements, then the per-send fields, in this order. A command the guard
     * encoded itself is a {@code RawBsonDocument} whose per-send fields are written in place after the statements (not
     * copied): valid until the next call on this command, so send it before building the next one. A command of
     * statement trees ({@link TreeCommandBody}) is a new {@code BsonDocument} over the same statements, encoded by the
     * driver when sent.
     *
     * @param txnNumber    the transaction number, or null for a non-retryable command
     * @param maxTimeMs    the server deadline
     * @param writeConcern the collection's write concern as a document, or null for the server default
     * @param comment      a comment that names the guarded write (servers 4.4+), or null
     */
    public BsonDocument toCommand(
            @Nullable Long txnNumber,
            long maxTimeMs,
            @Nullable BsonDocument writeConcern,
            @Nullable BsonValue comment) {
        return toCommand(txnNumber, null, maxTimeMs, writeConcern, comment);
    }

    /**
     * As {@link #toCommand(Long, long, BsonDocument, BsonValue)}, with the caller's statement ids: {@code stmtIds}, one
     * per statement in the command's order (mongodb/mongo {@code src/mongo/db/ops/write_ops.idl}, the write
     * commands' {@code stmtIds}; {@code write_ops::getStmtIdForWriteAt}). At most
     * {@link WriteCommandEncoder#MAX_STATEMENTS_WITH_IDS} statements, so that the array fits the room the encoder
     * leaves for the per-send fields.
     *
     * @param stmtIds the statement ids, or null for the server's default (the positions 0..n-1)
     */
    public BsonDocument toCommand(
            @Nullable Long txnNumber,
            @Nullable BsonArray stmtIds,
            long maxTimeMs,
            @Nullable BsonDocument writeConcern,
            @Nullable BsonValue comment) {
        if (stmtIds != null && stmtIds.size() != indices.length) {
            throw new IllegalArgumentException(
                    stmtIds.size() + " statement ids for a command of " + indices.length + " statements");
        }
        List<BsonElement> fields = new ArrayList<>(5);
        fields.add(new BsonElement("maxTimeMS", new BsonInt64(maxTimeMs)));
        if (txnNumber != null) {
            fields.add(new BsonElement("txnNumber", new BsonInt64(txnNumber)));
        }
        if (stmtIds != null) {
            fields.add(new BsonElement("stmtIds", stmtIds));
        }
        if (writeConcern != null && !writeConcern.isEmpty()) {
            fields.add(new BsonElement("writeConcern", writeConcern));
        }
        if (comment != null) {
            fields.add(new BsonElement("comment", comment));
        }
        return body.withSendFields(fields);
    }

    /** Whether the driver encodes this command's statements from BSON values ({@link TreeCommandBody}). */
    boolean encodedByDriver() {
        return body instanceof TreeCommandBody;
    }

    @Override
    public String toString() {
        return type.commandName() + "(" + indices.length + " statements, ordered=" + ordered + ", retryable="
                + retryable + ", indices="
                + (indices.length <= 8 ? Arrays.toString(indices) : indices[0] + ".." + indices[indices.length - 1])
                + ")";
    }
}
