package io.github.mongowriteguard.internal.command;

import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import org.bson.BsonBinaryReader;
import org.bson.BsonBinaryWriter;
import org.bson.BsonDocument;
import org.bson.BsonElement;
import org.bson.BsonInt64;
import org.bson.BsonValue;
import org.bson.RawBsonDocument;
import org.bson.io.BasicOutputBuffer;
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

    /** {@code {}}: the document the per-send fields are piped onto. */
    private static final byte[] EMPTY_DOCUMENT = {5, 0, 0, 0, 0};
    /** Enough for {@code maxTimeMS}, {@code txnNumber}, a usual write concern and the guard's comment. */
    private static final int TAIL_SIZE = 256;

    private final CommandType type;
    private final String collection;
    private final boolean ordered;
    /**
     * The command's bytes: {@code {<command>: <collection>, ordered: .., <statements>: [...]}}, followed by the per-send
     * fields of the last {@link #toCommand} call (which writes them here, in place, after {@link #bodyEnd}).
     */
    private byte[] bytes;
    /** Where the statements array ends: the per-send fields, then the document's terminating byte, are written here. */
    private final int bodyEnd;

    private final int[] indices;
    private final boolean retryable;

    WriteCommand(
            CommandType type,
            String collection,
            boolean ordered,
            byte[] bytes,
            int bodyEnd,
            int[] indices,
            boolean retryable) {
        this.type = type;
        this.collection = collection;
        this.ordered = ordered;
        this.bytes = bytes;
        this.bodyEnd = bodyEnd;
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
     * The command as sent: the statements' bytes as encoded, then the per-send fields, as {@code BsonBinaryWriter.pipe}
     * appends extra elements. The fields are written in place after the statements (the statements are not copied), so
     * the document returned is valid until the next call on this command: send it before building the next one.
     *
     * @param txnNumber    the transaction number, or null for a non-retryable command
     * @param maxTimeMs    the server deadline
     * @param writeConcern the collection's write concern as a document, or null for the server default
     * @param comment      a comment that names the guarded write (servers 4.4+), or null
     */
    public RawBsonDocument toCommand(
            @Nullable Long txnNumber,
            long maxTimeMs,
            @Nullable BsonDocument writeConcern,
            @Nullable BsonValue comment) {
        List<BsonElement> fields = new ArrayList<>(4);
        fields.add(new BsonElement("maxTimeMS", new BsonInt64(maxTimeMs)));
        if (txnNumber != null) {
            fields.add(new BsonElement("txnNumber", new BsonInt64(txnNumber)));
        }
        if (writeConcern != null && !writeConcern.isEmpty()) {
            fields.add(new BsonElement("writeConcern", writeConcern));
        }
        if (comment != null) {
            fields.add(new BsonElement("comment", comment));
        }
        // Only the fields are written here, as the pipe of an empty document with them as extra elements writes them;
        // their bytes then replace what follows the statements.
        BasicOutputBuffer tail = new BasicOutputBuffer(TAIL_SIZE);
        try (BsonBinaryWriter writer = new BsonBinaryWriter(tail);
                BsonBinaryReader reader = new BsonBinaryReader(ByteBuffer.wrap(EMPTY_DOCUMENT))) {
            writer.pipe(reader, fields);
        }
        int tailLength = tail.getPosition() - 4; // the fields and the terminating byte, without the length prefix
        int size = bodyEnd + tailLength;
        if (size > bytes.length) {
            bytes = Arrays.copyOf(bytes, size);
        }
        System.arraycopy(tail.getInternalBuffer(), 4, bytes, bodyEnd, tailLength);
        bytes[0] = (byte) size;
        bytes[1] = (byte) (size >>> 8);
        bytes[2] = (byte) (size >>> 16);
        bytes[3] = (byte) (size >>> 24);
        return new RawBsonDocument(bytes, 0, size);
    }

    @Override
    public String toString() {
        return type.commandName() + "(" + indices.length + " statements, ordered=" + ordered + ", retryable="
                + retryable + ", indices="
                + (indices.length <= 8 ? Arrays.toString(indices) : indices[0] + ".." + indices[indices.length - 1])
                + ")";
    }
}
