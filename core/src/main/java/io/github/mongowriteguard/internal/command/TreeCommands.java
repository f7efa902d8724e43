package io.github.mongowriteguard.internal.command;

import io.github.mongowriteguard.internal.plan.DocumentShortcuts;
import io.github.mongowriteguard.internal.plan.PlannedBulk;
import java.util.Arrays;
import java.util.List;
import org.bson.BsonArray;
import org.bson.BsonDocument;
import org.bson.codecs.configuration.CodecRegistry;
import org.jspecify.annotations.Nullable;

/**
 * Insert and replacement commands whose statements are BSON trees that the driver encodes once, straight into its
 * message ({@link TreeCommandBody}), instead of bytes the guard encoded and the driver copies again: used wherever the
 * statements allow it and the documents are large enough (see {@link #FROM_DOCUMENT_BYTES},
 * {@link #REPLACEMENTS_FROM_DOCUMENT_BYTES}).
 *
 * <p>Only where the bytes are known to be the ones {@link EncodedCommandWriter} writes, so that the server receives the
 * same command and the command is cut at the same statement: each statement a tree {@link StatementTrees} builds, no
 * deeper than the driver writes it two levels down the command, its size counted exactly by {@link BsonTreeSize}. A
 * statement on the way that is not one (a POJO, an {@code _id} the guard appends, a nested raw document or wrapper, a
 * string with surrogates, an update with operators) makes the command's statements bytes the guard encodes, as before.
 *
 * @param <T> the collection's document class
 */
final class TreeCommands<T> {
    /**
     * A command of inserts is sent as trees when its first document measured at least this many bytes: at every size.
     * Measured with {@code lab payloads} (100,000 inserts, the calling thread's allocation against the driver's), trees
     * against the guard's bytes: 64-byte documents 0.60 against 0.73-0.81, 1 KiB 0.67 against 1.14: the bytes path
     * allocates the command twice (its buffer, then the driver's temporary copy) and looks each value's codec up in the
     * registry; a tree is the document's values once, and the driver encodes it without a copy.
     */
    static final long FROM_DOCUMENT_BYTES = 0;

    /**
     * A command of replacements is sent as trees when its first replacement measured at least this many bytes. A
     * replacement's statement is three trees (the statement, its filter, the document) where an insert's is one: for
     * small documents they cost what the copy saves. Measured on the cost-free server ({@code lab perf}, 60-byte
     * replace-upserts, trees everywhere against the bytes): time 1.09-1.30 of the driver's against 0.90-1.22,
     * allocation 1.01-1.08 against 0.99-1.02; encoding and the driver's encoding alone, 10,000 replace-upserts of about
     * 1 KiB: the same time, 0.42 of the allocation (1,452 against 3,479 bytes a write).
     */
    static final long REPLACEMENTS_FROM_DOCUMENT_BYTES = 1024;

    /** The statements sit at level 3 (command, array, statement) where the driver's writer allows 1,024 levels. */
    private static final int STATEMENT_DEPTH_LIMIT = EncodedCommandWriter.DRIVER_MAX_DEPTH - 2;

    private final StatementTrees<T> trees;
    private final long insertsFrom;
    private final long replacementsFrom;

    /**
     * @param insertsFrom      the first document's measured size from which a command of inserts is sent as trees (0:
     *                         every command whose statements allow it; Long.MAX_VALUE: never)
     * @param replacementsFrom the same for a command of replacements
     */
    TreeCommands(Class<T> documentClass, CodecRegistry registry, long insertsFrom, long replacementsFrom) {
        this.trees = new StatementTrees<>(documentClass, registry);
        this.insertsFrom = insertsFrom;
        this.replacementsFrom = replacementsFrom;
    }

    /** A command built from trees: the command, and the position in the round's indices after its last statement. */
    record Built(WriteCommand command, int next) {}

    /** Whether the command of {@code bucket} starting with write {@code index} is worth sending as trees. */
    boolean worthIt(StatementBucket bucket, PlannedBulk plan, int index) {
        return switch (bucket) {
            case INSERTS -> plan.measuredDocumentSize(index) >= insertsFrom;
            case REPLACEMENTS -> plan.measuredDocumentSize(index) >= replacementsFrom;
            default -> false;
        };
    }

    /**
     * The statements of {@code head}'s bucket from {@code indices.get(from)} as one command of trees, cut where
     * {@link EncodedCommandWriter} cuts (at {@link WriteCommandEncoder#MAX_STATEMENTS}, or before the statement that
     * takes the statements' bytes past {@link WriteCommandEncoder#MAX_STATEMENT_BYTES}; a first statement goes in
     * whatever its size; one statement only when {@code alone}), or null when a statement on the way cannot be a tree
     * of known size.
     */
    @Nullable
    Built command(CommandHead head, PlannedBulk plan, List<Integer> indices, int from, boolean alone) {
        int most = alone ? 1 : WriteCommandEncoder.MAX_STATEMENTS;
        BsonArray statements = new BsonArray(Math.min(indices.size() - from, 64));
        int[] taken = new int[Math.min(indices.size() - from, 64)];
        long bytes = 0;
        int count = 0;
        int position = from;
        while (position < indices.size() && count < most) {
            int index = indices.get(position);
            if (StatementBucket.of(plan.sentAs(index)) != head.bucket()) {
                break;
            }
            BsonDocument tree = trees.statement(plan, index, STATEMENT_DEPTH_LIMIT);
            long size = tree == null ? -1 : BsonTreeSize.of(tree, STATEMENT_DEPTH_LIMIT);
            if (size < 0) {
                return null;
            }
            // The statement's array element: type byte, its name (its position in the command) and terminator.
            long element = 1 + DocumentShortcuts.decimalDigits(count) + 1 + size;
            if (count > 0 && bytes + element > WriteCommandEncoder.MAX_STATEMENT_BYTES) {
                break;
            }
            bytes += element;
            statements.add(tree);
            if (count == taken.length) {
                taken = Arrays.copyOf(taken, count * 2);
            }
            taken[count++] = index;
            position++;
        }
        WriteCommand command = new WriteCommand(
                head.bucket().kind,
                head.collection(),
                head.ordered(),
                new TreeCommandBody(head.elements(), head.bucket().kind.statementsField(), statements),
                Arrays.copyOf(taken, count),
                !head.bucket().multi);
        return new Built(command, position);
    }
}
