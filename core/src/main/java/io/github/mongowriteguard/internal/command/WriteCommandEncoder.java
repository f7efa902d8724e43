package io.github.mongowriteguard.internal.command;

import io.github.mongowriteguard.bulk.WriteKind;
import io.github.mongowriteguard.internal.plan.IndexList;
import io.github.mongowriteguard.internal.plan.PlannedBulk;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import java.util.NoSuchElementException;
import org.bson.codecs.configuration.CodecRegistry;
import org.jspecify.annotations.Nullable;

/**
 * Turns the writes of one round into write commands, split as the driver splits a bulk (driver-core
 * {@code BulkWriteBatch}): one command per request type (insert, update, replace, delete) in an unordered round, the
 * types in the order each first appears and the statements of a type in the caller's order; a new command at every
 * change of type in an ordered round. Unlike the driver, single-document and multi-document statements never share a
 * command (only a command of single-document statements may carry a {@code txnNumber} and be resent as the same server
 * copy), so a type's run is cut where that changes; and a command is cut at 100,000 statements or about 16 MiB.
 *
 * <p>Every statement is encoded once, by the route {@link StatementRoute} chooses for it: straight into its command's
 * bytes ({@link EncodedCommandWriter}: by hand, {@link PlainStatementBytes}, or field by field through the codecs as the
 * driver encodes it, {@link StatementWriter}), or, for inserts and replacements whose bytes are known exactly, as BSON
 * trees that the driver encodes straight into its message ({@link TreeCommands}). All give the same bytes and the same
 * cuts.
 *
 * @param <T> the collection's document class
 */
public final class WriteCommandEncoder<T> {
    /** mongod's {@code maxWriteBatchSize}. */
    public static final int MAX_STATEMENTS = 100_000;
    /**
     * At most this many statements in a command that carries the caller's {@code stmtIds}: the array (about 9 bytes a
     * statement) then stays within the room above {@link #MAX_STATEMENT_BYTES} that the server accepts for the
     * per-send fields (16 KiB more than 16 MiB).
     */
    public static final int MAX_STATEMENTS_WITH_IDS = 1_000;
    /**
     * The statements of one command stay below this many bytes: a command is one BSON document sent with
     * {@code runCommand}, which the server accepts up to 16 MiB plus 16 KiB.
     */
    public static final int MAX_STATEMENT_BYTES = 16 * 1024 * 1024 - 16 * 1024;

    /** The driver's request types ({@link WriteKind#requestType}). */
    private static final int DRIVER_TYPES = WriteKind.RequestType.values().length;

    private final String collection;
    private final StatementRoute route;
    private final StatementWriter<T> statements;
    private final TreeCommands<T> trees;

    public WriteCommandEncoder(String collection, Class<T> documentClass, CodecRegistry registry) {
        this(
                collection,
                documentClass,
                registry,
                StatementRoute.INSERT_TREES_FROM_BYTES,
                StatementRoute.REPLACEMENT_TREES_FROM_BYTES);
    }

    /** With inserts and replacements sent as trees from another document size (0: wherever they can be; Long.MAX_VALUE: never). */
    WriteCommandEncoder(String collection, Class<T> documentClass, CodecRegistry registry, long treesFromBytes) {
        this(collection, documentClass, registry, treesFromBytes, treesFromBytes);
    }

    private WriteCommandEncoder(
            String collection,
            Class<T> documentClass,
            CodecRegistry registry,
            long insertTreesFromBytes,
            long replacementTreesFromBytes) {
        this.collection = collection;
        this.route = new StatementRoute(documentClass, registry, insertTreesFromBytes, replacementTreesFromBytes);
        this.statements = new StatementWriter<>(documentClass, registry, route);
        this.trees = new TreeCommands<>(documentClass, registry);
    }

    /**
     * Encodes the given writes of the caller's bulk.
     *
     * @param plan    the plan, which holds the writes and the filters to send
     * @param indices the indices of this round's writes, in the caller's order
     * @param ordered whether the round keeps the caller's order (a new command at every change of type)
     * @param options the caller's command-level options: {@code bypassDocumentValidation} and {@code let}, sent on
     *                every command as the driver sends them
     */
    public List<WriteCommand> encode(PlannedBulk plan, List<Integer> indices, boolean ordered, CommandOptions options) {
        return encode(plan, indices, ordered, options, false);
    }

    /**
     * As {@link #encode(PlannedBulk, List, boolean, CommandOptions)}; with {@code alone}, every update, replace and delete
     * is a command of its own (in the same order), so that the command's counts are the statement's (inserts are
     * grouped as usual: their ids are known).
     */
    public List<WriteCommand> encode(
            PlannedBulk plan, List<Integer> indices, boolean ordered, CommandOptions options, boolean alone) {
        Commands commands = new Commands(plan, indices, ordered, options, alone, false);
        List<WriteCommand> all = new ArrayList<>();
        while (commands.hasNext()) {
            all.add(commands.next());
        }
        return all;
    }

    /**
     * The same commands as {@link #encode(PlannedBulk, List, boolean, CommandOptions, boolean)}, encoded one at a time as
     * they are asked for, all in one reused buffer: a round of large documents then allocates one command's bytes
     * instead of every command's before the first is sent. The bytes of a command (and the document its
     * {@link WriteCommand#toCommand} returns) are valid until the next {@link Commands#next}: send it, and every resend
     * of its copy, before asking for the next one.
     */
    public Commands commands(
            PlannedBulk plan, List<Integer> indices, boolean ordered, CommandOptions options, boolean alone) {
        return new Commands(plan, indices, ordered, options, alone, true);
    }

    /**
     * As {@link #commands(PlannedBulk, List, boolean, CommandOptions, boolean)}, with a command cut after at most
     * {@code maxStatements} statements (in the same order: an ordered round's commands follow one another).
     */
    public Commands commands(
            PlannedBulk plan,
            List<Integer> indices,
            boolean ordered,
            CommandOptions options,
            boolean alone,
            int maxStatements) {
        Commands commands = new Commands(plan, indices, ordered, options, alone, true);
        if (maxStatements < MAX_STATEMENTS) {
            commands.cutEvery(maxStatements);
        }
        return commands;
    }

    /** The commands of one round, encoded on demand, in the order {@link #encode} lists them. */
    public final class Commands implements Iterator<WriteCommand> {
        private final PlannedBulk plan;
        private final boolean ordered;
        private final CommandOptions options;
        private final boolean alone;
        private final boolean reuse;
        /** The statements of each part, in the order they are sent: one part when ordered, one per type otherwise. */
        private List<List<Integer>> parts;

        private int part;
        /** The position in {@code parts.get(part)} of the first statement not yet in a command. */
        private int position;
        /** The buffer of the last command, written over by the next one when {@code reuse}. */
        private @Nullable CommandBuffer spare;

        private Commands(
                PlannedBulk plan,
                List<Integer> indices,
                boolean ordered,
                CommandOptions options,
                boolean alone,
                boolean reuse) {
            this.plan = plan;
            this.ordered = ordered;
            this.options = options;
            this.alone = alone;
            this.reuse = reuse;
            if (ordered) {
                parts = List.of(indices);
            } else {
                parts = byDriverType(plan, indices);
            }
            skipFinishedParts();
        }

        @Override
        public boolean hasNext() {
            return part < parts.size();
        }

        /** Before the first command: every part cut into runs of at most {@code max} statements, in order. */
        private void cutEvery(int max) {
            List<List<Integer>> cut = new ArrayList<>();
            for (List<Integer> indices : parts) {
                for (int from = 0; from < indices.size(); from += max) {
                    cut.add(indices.subList(from, Math.min(indices.size(), from + max)));
                }
            }
            parts = cut;
        }

        /** The next command: a run of statements of one bucket, cut where the command is full. */
        @Override
        public WriteCommand next() {
            if (!hasNext()) {
                throw new NoSuchElementException("every command of the round was encoded");
            }
            List<Integer> indices = parts.get(part);
            StatementBucket bucket = StatementBucket.of(plan.sentAs(indices.get(position)));
            CommandHead head = new CommandHead(collection, bucket, ordered, options);
            boolean ownCommand = alone && bucket != StatementBucket.INSERTS;
            if (route.of(plan, indices.get(position), true) == StatementRoute.Route.TREE) {
                TreeCommands.Built built = trees.command(head, plan, indices, position, ownCommand);
                if (built != null) {
                    position = built.next();
                    skipFinishedParts();
                    return built.command();
                }
            }
            EncodedCommandWriter open = new EncodedCommandWriter(
                    head,
                    ownCommand
                            ? EncodedCommandWriter.Expected.ONE
                            : EncodedCommandWriter.Expected.of(plan, indices, position, bucket),
                    reuse ? spare : null,
                    statements);
            open.add(indices.get(position++), plan);
            while (!ownCommand && position < indices.size()) {
                int index = indices.get(position);
                if (StatementBucket.of(plan.sentAs(index)) != bucket || !open.tryAdd(index, plan)) {
                    break; // another kind of write, or this command is full
                }
                position++;
            }
            skipFinishedParts();
            spare = open.buffer();
            return open.finish();
        }

        /**
         * The statements not in a command yet, in order (for an ordered round: the caller's order from where the last
         * command ended).
         */
        public List<Integer> remaining() {
            List<Integer> remaining = new ArrayList<>();
            for (int p = part; p < parts.size(); p++) {
                List<Integer> indices = parts.get(p);
                remaining.addAll(indices.subList(p == part ? position : 0, indices.size()));
            }
            return remaining;
        }

        /**
         * Unordered: the driver's types in the order each first appears, each type's statements in the caller's order
         * (counted first, so that each type's indices are one array of plain ints).
         */
        private static List<List<Integer>> byDriverType(PlannedBulk plan, List<Integer> indices) {
            int[] counts = new int[DRIVER_TYPES];
            int[] order = new int[DRIVER_TYPES];
            byte[] typeAt = new byte[indices.size()]; // read from each write's facts once
            int types = 0;
            for (int position = 0; position < indices.size(); position++) {
                int type = plan.sentAs(indices.get(position)).requestType().ordinal();
                typeAt[position] = (byte) type;
                if (counts[type]++ == 0) {
                    order[types++] = type;
                }
            }
            int[][] ofType = new int[DRIVER_TYPES][];
            int[] filled = new int[DRIVER_TYPES];
            for (int position = 0; position < indices.size(); position++) {
                int index = indices.get(position);
                int type = typeAt[position];
                if (ofType[type] == null) {
                    ofType[type] = new int[counts[type]];
                }
                ofType[type][filled[type]++] = index;
            }
            List<List<Integer>> parts = new ArrayList<>(types);
            for (int t = 0; t < types; t++) {
                parts.add(IndexList.over(ofType[order[t]]));
            }
            return parts;
        }

        private void skipFinishedParts() {
            while (part < parts.size() && position >= parts.get(part).size()) {
                part++;
                position = 0;
            }
        }
    }
}
