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
 * message ({@link TreeCommandBody}), instead of bytes the guard encoded and the driver copies again: for a command
 * whose first statement's route is a tree ({@link StatementRoute}).
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
    /** The statements sit at level 3 (command, array, statement) where the driver's writer allows 1,024 levels. */
    private static final int STATEMENT_DEPTH_LIMIT = EncodedCommandWriter.DRIVER_MAX_DEPTH - 2;

    private final StatementTrees<T> trees;

    TreeCommands(Class<T> documentClass, CodecRegistry registry) {
        this.trees = new StatementTrees<>(documentClass, registry);
    }

    /** A command built from trees: the command, and the position in the round's indices after its last statement. */
    record Built(WriteCommand command, int next) {}

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
