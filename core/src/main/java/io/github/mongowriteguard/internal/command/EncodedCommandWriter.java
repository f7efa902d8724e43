package io.github.mongowriteguard.internal.command;

import io.github.mongowriteguard.bulk.BulkPlan;
import java.util.Arrays;
import java.util.List;
import org.bson.BsonBinaryWriter;
import org.bson.BsonBinaryWriterSettings;
import org.bson.BsonWriterSettings;
import org.jspecify.annotations.Nullable;

/**
 * One command written by the guard into its own buffer, statement after statement:
 * {@code {<command>: <collection>, ordered: .., [bypassDocumentValidation, let,] <statements>: [...]}}. A statement that
 * takes the statements past {@link WriteCommandEncoder#MAX_STATEMENT_BYTES} is written, then dropped: the command is
 * cut there by the bytes written.
 */
final class EncodedCommandWriter {
    /** A statement's array element: its type byte, its name (the position, up to 6 digits) and its terminator. */
    private static final int STATEMENT_OVERHEAD_BYTES = 8;
    /** Sizing guesses for what the plan did not measure: a filter with {@code q}, an update document with {@code u}. */
    private static final int FILTER_GUESS_BYTES = 32;

    private static final int SMALL_DOCUMENT_GUESS_BYTES = 48;
    /** The command's own fields around the statements, and the per-send fields {@link WriteCommand#toCommand} adds. */
    private static final int HEADER_AND_TAIL_BYTES = 512;

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
     * @param statements how many statements the command is expected to hold
     */
    record Expected(long bytes, int statements) {
        static final Expected ONE = new Expected(0, 1);

        static Expected of(BulkPlan plan, List<Integer> indices, int from, StatementBucket bucket) {
            long bytes = 0;
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
                bytes += STATEMENT_OVERHEAD_BYTES
                        + (bucket == StatementBucket.INSERTS ? 0 : FILTER_GUESS_BYTES)
                        + Math.max(documentSize, SMALL_DOCUMENT_GUESS_BYTES);
                if (bytes > WriteCommandEncoder.MAX_STATEMENT_BYTES) {
                    break;
                }
            }
            return new Expected(bytes, count);
        }
    }

    private final String collection;
    private final StatementBucket bucket;
    private final boolean ordered;
    private final CommandBuffer buffer;
    private final BsonBinaryWriter writer;
    private final Expected expected;
    private final StatementWriter<?> statements;
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
        if (reused == null) {
            this.buffer = new CommandBuffer(withMargin(expected.bytes()));
        } else {
            reused.truncateToPosition(0);
            reused.reserve(withMargin(expected.bytes()));
            this.buffer = reused;
        }
        // Statements sit two levels down (command, array), where the driver writes each as a document of its own:
        // two more levels than the driver's limit write what the driver writes (the planner refuses deeper ones).
        this.writer = new BsonBinaryWriter(
                new BsonWriterSettings(DRIVER_MAX_DEPTH + 2), new BsonBinaryWriterSettings(), buffer);
        this.indices = new int[Math.max(1, expected.statements())];
        writer.writeStartDocument();
        head.write(writer);
        writer.writeStartArray(bucket.kind.statementsField());
        statementsStart = buffer.getPosition();
    }

    /** The buffer the command is written in, for the next command to write over. */
    CommandBuffer buffer() {
        return buffer;
    }

    /** Adds the statement, or writes nothing and returns false when the command is full. */
    boolean tryAdd(int index, BulkPlan plan) {
        if (count >= WriteCommandEncoder.MAX_STATEMENTS) {
            return false;
        }
        writer.mark();
        statements.write(writer, index, plan);
        if (count > 0 && buffer.getPosition() - statementsStart > WriteCommandEncoder.MAX_STATEMENT_BYTES) {
            writer.reset(); // back to the mark: the statement's bytes are dropped
            return false;
        }
        if (count == 0 && expected.statements() > 1) {
            // Where the plan measured nothing (updates, deletes) or measured without the _id the guard assigned
            // since, the first statement's size stands for the others: if they clearly need more room than the
            // buffer has, make it at once.
            long first = buffer.getPosition() - statementsStart;
            long all = Math.min(first * expected.statements(), WriteCommandEncoder.MAX_STATEMENT_BYTES + 2 * first);
            if (all > expected.bytes() + expected.bytes() / 16) {
                buffer.reserve(statementsStart + withMargin(all + all / 16));
            }
        }
        if (count == indices.length) {
            indices = Arrays.copyOf(indices, count * 2);
        }
        indices[count++] = index;
        return true;
    }

    /** Adds the first statement of a command: it goes in whatever its size (the planner limits documents). */
    void add(int index, BulkPlan plan) {
        if (!tryAdd(index, plan)) {
            throw new IllegalStateException("an empty command refused a statement");
        }
    }

    WriteCommand finish() {
        writer.writeEndArray();
        int bodyEnd = buffer.getPosition();
        writer.writeEndDocument();
        writer.close();
        return new WriteCommand(
                bucket.kind,
                collection,
                ordered,
                new EncodedCommandBody(buffer.array(), bodyEnd),
                Arrays.copyOf(indices, count),
                !bucket.multi);
    }

    /** Room for {@code statementBytes} of statements, the command's own fields and its per-send fields. */
    private static int withMargin(long statementBytes) {
        return (int) Math.min(
                Math.max(MIN_BUFFER_BYTES, statementBytes + statementBytes / 32 + HEADER_AND_TAIL_BYTES),
                Integer.MAX_VALUE - 1024);
    }
}
