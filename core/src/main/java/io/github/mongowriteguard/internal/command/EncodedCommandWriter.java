package io.github.mongowriteguard.internal.command;

import io.github.mongowriteguard.internal.plan.PlannedBulk;
import java.util.Arrays;
import java.util.List;
import org.bson.BsonBinaryWriter;
import org.bson.BsonBinaryWriterSettings;
import org.bson.BsonType;
import org.bson.BsonWriterSettings;
import org.jspecify.annotations.Nullable;

/**
 * One command written by the guard into its own buffer, statement after statement:
 * {@code {<command>: <collection>, ordered: .., [bypassDocumentValidation, let,] <statements>: [...]}}. A statement that
 * takes the statements past {@link WriteCommandEncoder#MAX_STATEMENT_BYTES} is written, then dropped: the command is
 * cut there by the bytes written.
 *
 * <p>The statements array is framed here, not by a {@code BsonBinaryWriter}: each element's type byte and its name (the
 * position in decimal ASCII, {@link CommandBuffer#writeArrayIndexName}) go straight into the buffer, then a writer of
 * its own writes the statement as a top-level document, as the driver writes each document of an OP_MSG document
 * sequence. The bytes are the ones {@code BsonBinaryWriter.writeStartArray} and its elements write, without what that
 * costs per statement at 100,000 statements: a {@code String} for every name from position 1,000 on (bson caches the
 * first 1,000 only) and, to drop the statement that does not fit, a {@code mark()} (two objects); the dropped statement
 * is cut off by the buffer's position instead.
 */
final class EncodedCommandWriter {
    /** A statement's array element: its type byte, its name (the position, up to 6 digits) and its terminator. */
    private static final int STATEMENT_OVERHEAD_BYTES = 8;
    /** Sizing guesses for what the plan did not measure: a filter with {@code q}, an update document with {@code u}. */
    private static final int FILTER_GUESS_BYTES = 32;

    private static final int SMALL_DOCUMENT_GUESS_BYTES = 48;
    /** The command's own fields around the statements, and the per-send fields {@link WriteCommand#toCommand} adds. */
    private static final int HEADER_AND_TAIL_BYTES = 512;
    /** The bytes of the first statement's name, {@code "0"} and its terminator. */
    private static final int FIRST_NAME_BYTES = 2;

    private static final int MIN_BUFFER_BYTES = 1024;
    /** The driver's nesting limit, {@code BsonWriterSettings}' default maximum serialization depth. */
    static final int DRIVER_MAX_DEPTH = new BsonWriterSettings().getMaxSerializationDepth();

    /**
     * What the statements of the command that starts at {@code from} are expected to take, so that its buffer is
     * allocated about once instead of growing by doubling: the statements of {@code bucket} from there until one
     * crosses the command's limit (that one is written too, before it is dropped), their bytes from the plan's measured
     * document sizes where it has them. A hint only: a larger command grows its buffer, and where a command is cut
     * depends on the bytes written, not on this.
     *
     * @param bytes      the statements' expected bytes (measured documents, guesses for the rest)
     * @param firstBytes the first statement's expected bytes, which its command's first buffer is made for
     * @param statements how many statements the command is expected to hold
     */
    record Expected(long bytes, long firstBytes, int statements) {
        static final Expected ONE = new Expected(0, 0, 1);

        static Expected of(PlannedBulk plan, List<Integer> indices, int from, StatementBucket bucket) {
            long bytes = 0;
            long first = 0;
            int count = 0;
            for (int position = from;
                    position < indices.size() && count < WriteCommandEncoder.MAX_STATEMENTS;
                    position++) {
                int index = indices.get(position);
                if (StatementBucket.of(plan.sentAs(index)) != bucket) {
                    break;
                }
                count++;
                long documentSize = plan.measuredDocumentSize(index);
                long statement = STATEMENT_OVERHEAD_BYTES
                        + (bucket == StatementBucket.INSERTS ? 0 : FILTER_GUESS_BYTES)
                        + Math.max(documentSize, SMALL_DOCUMENT_GUESS_BYTES);
                if (count == 1) {
                    first = statement;
                }
                bytes += statement;
                if (bytes > WriteCommandEncoder.MAX_STATEMENT_BYTES) {
                    break;
                }
            }
            return new Expected(bytes, first, count);
        }
    }

    private final String collection;
    private final StatementBucket bucket;
    private final boolean ordered;
    private final CommandBuffer buffer;
    /**
     * Writes each statement that {@link StatementWriter#writePlain} does not as a top-level document, one after the
     * other, into the same buffer; made for the first such statement.
     */
    private @Nullable BsonBinaryWriter statement;

    private final Expected expected;
    private final StatementWriter<?> statements;
    /** Where the statements array's length is, right before its first element. */
    private final int arrayStart;

    private final int statementsStart;
    private int[] indices;
    private int count;

    EncodedCommandWriter(
            CommandHead head, Expected expected, @Nullable CommandBuffer reused, StatementWriter<?> statements) {
        this.collection = head.collection();
        this.bucket = head.bucket();
        this.ordered = head.ordered();
        this.expected = expected;
        this.statements = statements;
        // Made for the first statement: its size, known once it is written, tells how much the others need.
        if (reused == null) {
            this.buffer = new CommandBuffer(withMargin(expected.firstBytes()));
        } else {
            reused.truncateToPosition(0);
            reused.reserve(withMargin(expected.firstBytes()));
            this.buffer = reused;
        }
        this.indices = new int[Math.max(1, expected.statements())];
        buffer.writeInt32(0); // the command's length, written when it ends
        head.write(buffer);
        buffer.writeByte(BsonType.ARRAY.getValue());
        buffer.writeCString(bucket.kind.statementsField());
        arrayStart = buffer.getPosition();
        buffer.writeInt32(0); // the array's length, written when it ends
        statementsStart = buffer.getPosition();
    }

    /** The buffer the command is written in, for the next command to write over. */
    CommandBuffer buffer() {
        return buffer;
    }

    /** Adds the statement, or writes nothing and returns false when the command is full. */
    boolean tryAdd(int index, PlannedBulk plan) {
        if (count >= WriteCommandEncoder.MAX_STATEMENTS) {
            return false;
        }
        int start = buffer.getPosition();
        buffer.writeByte(BsonType.DOCUMENT.getValue());
        buffer.writeArrayIndexName(count);
        if (!statements.writePlain(buffer, index, plan)) {
            statements.write(statementWriter(), index, plan);
        }
        if (count > 0 && buffer.getPosition() - statementsStart > WriteCommandEncoder.MAX_STATEMENT_BYTES) {
            // The statement's bytes are dropped; the statement writer is between documents, as before it.
            buffer.truncateToPosition(start);
            return false;
        }
        if (count == 0 && expected.statements() > 1) {
            reserveForAll(buffer.getPosition() - statementsStart);
        }
        if (count == indices.length) {
            indices = Arrays.copyOf(indices, count * 2);
        }
        indices[count++] = index;
        return true;
    }

    /** Each statement is a document of its own, as the driver writes it, under the driver's nesting limit. */
    private BsonBinaryWriter statementWriter() {
        if (statement == null) {
            statement = new BsonBinaryWriter(
                    new BsonWriterSettings(DRIVER_MAX_DEPTH), new BsonBinaryWriterSettings(), buffer);
        }
        return statement;
    }

    /**
     * Makes room for every expected statement in one allocation once the first is written: where the plan measured
     * nothing (updates, deletes, filters) or measured without the {@code _id} the guard assigned since, the first
     * statement's size stands for the others, with their longer names; the plan's expectation where that is larger.
     */
    private void reserveForAll(long first) {
        int n = expected.statements();
        long like = Math.min(
                (first - FIRST_NAME_BYTES) * n + arrayIndexNameBytes(n),
                WriteCommandEncoder.MAX_STATEMENT_BYTES + 2 * first);
        long all = Math.max(like, expected.bytes());
        buffer.reserve(statementsStart + withMargin(all + all / 32));
    }

    /** The bytes of the names {@code "0"} to {@code n - 1} with their terminators. */
    static long arrayIndexNameBytes(int n) {
        long bytes = n; // the terminators
        long from = 0;
        long to = 10;
        for (int digits = 1; from < n; digits++) {
            bytes += (Math.min(n, to) - from) * digits;
            from = to;
            to *= 10;
        }
        return bytes;
    }

    /** Adds the first statement of a command: it goes in whatever its size (the planner limits documents). */
    void add(int index, PlannedBulk plan) {
        if (!tryAdd(index, plan)) {
            throw new IllegalStateException("an empty command refused a statement");
        }
    }

    WriteCommand finish() {
        buffer.writeByte(0); // the array's terminator
        buffer.writeInt32(arrayStart, buffer.getPosition() - arrayStart);
        int bodyEnd = buffer.getPosition();
        buffer.writeByte(0); // the command's terminator, then its length, as a writer ends a document
        buffer.writeInt32(0, buffer.getPosition());
        if (statement != null) {
            statement.close();
        }
        return new WriteCommand(
                bucket.kind,
                collection,
                ordered,
                new EncodedCommandBody(buffer.array(), bodyEnd),
                count == indices.length ? indices : Arrays.copyOf(indices, count),
                !bucket.multi);
    }

    /** Room for {@code statementBytes} of statements, the command's own fields and its per-send fields. */
    private static int withMargin(long statementBytes) {
        return (int) Math.min(
                Math.max(MIN_BUFFER_BYTES, statementBytes + statementBytes / 32 + HEADER_AND_TAIL_BYTES),
                Integer.MAX_VALUE - 1024);
    }
}
