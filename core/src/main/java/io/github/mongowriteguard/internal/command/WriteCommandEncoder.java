package io.github.mongowriteguard.internal.command;

import io.github.mongowriteguard.bulk.BulkPlan;
import io.github.mongowriteguard.bulk.WriteKind;
import io.github.mongowriteguard.bulk.WriteRecord;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.NoSuchElementException;
import org.bson.BsonBinaryWriter;
import org.bson.BsonBinaryWriterSettings;
import org.bson.BsonDocument;
import org.bson.BsonDocumentWrapper;
import org.bson.BsonWriterSettings;
import org.bson.codecs.BsonDocumentCodec;
import org.bson.codecs.Codec;
import org.bson.codecs.DocumentCodec;
import org.bson.codecs.EncoderContext;
import org.bson.codecs.configuration.CodecRegistry;
import org.bson.conversions.Bson;
import org.jspecify.annotations.Nullable;

/**
 * Turns the writes of one round into write commands, split as the driver splits a bulk (driver-core
 * {@code BulkWriteBatch}): one command per request type (insert, update, replace, delete) in an unordered round, the
 * types in the order each first appears and the statements of a type in the caller's order; a new command at every
 * change of type in an ordered round. Unlike the driver, single-document and multi-document statements never share a
 * command (only a command of single-document statements may carry a {@code txnNumber} and be resent as the same server
 * copy), so a type's run is cut where that changes; and a command is cut at 100,000 statements or about 16 MiB.
 *
 * <p>Every statement is encoded once, straight into its command's bytes, field by field as the driver encodes it
 * (driver-core {@code SplittablePayload}): update {@code q, u, multi (when true), upsert (when true), collation,
 * arrayFilters, hint, sort}; delete {@code q, limit, collation, hint}; documents to insert with their {@code _id} first,
 * replacements in their own field order. Filters are the copies the plan took.
 *
 * @param <T> the collection's document class
 */
public final class WriteCommandEncoder<T> {
    /** mongod's {@code maxWriteBatchSize}. */
    public static final int MAX_STATEMENTS = 100_000;
    /**
     * The statements of one command stay below this many bytes: a command is one BSON document sent with
     * {@code runCommand}, which the server accepts up to 16 MiB plus 16 KiB.
     */
    public static final int MAX_STATEMENT_BYTES = 16 * 1024 * 1024 - 16 * 1024;

    /** A statement's array element: its type byte, its name (the position, up to 6 digits) and its terminator. */
    private static final int STATEMENT_OVERHEAD_BYTES = 8;
    /** Sizing guesses for what the plan did not measure: a filter with {@code q}, an update document with {@code u}. */
    private static final int FILTER_GUESS_BYTES = 32;

    private static final int SMALL_DOCUMENT_GUESS_BYTES = 48;
    /** The command's own fields around the statements, and the per-send fields {@link WriteCommand#toCommand} adds. */
    private static final int HEADER_AND_TAIL_BYTES = 512;

    private static final int MIN_BUFFER_BYTES = 1024;
    /** The driver's nesting limit, {@code BsonWriterSettings}' default maximum serialization depth. */
    private static final int DRIVER_MAX_DEPTH = new BsonWriterSettings().getMaxSerializationDepth();

    private static final BsonDocumentCodec BSON_CODEC = new BsonDocumentCodec();
    private static final EncoderContext CONTEXT = EncoderContext.builder().build();
    /** As the driver encodes documents to insert and replacements: {@code _id} first. */
    private static final EncoderContext COLLECTIBLE =
            EncoderContext.builder().isEncodingCollectibleDocument(true).build();

    /** The driver's request types, each its own command; plus whether the statements may touch many documents. */
    private enum Bucket {
        INSERTS(WriteCommand.CommandType.INSERT, false),
        UPDATES(WriteCommand.CommandType.UPDATE, false),
        MULTI_UPDATES(WriteCommand.CommandType.UPDATE, true),
        REPLACEMENTS(WriteCommand.CommandType.UPDATE, false),
        DELETES(WriteCommand.CommandType.DELETE, false),
        MULTI_DELETES(WriteCommand.CommandType.DELETE, true);

        final WriteCommand.CommandType kind;
        final boolean multi;

        Bucket(WriteCommand.CommandType kind, boolean multi) {
            this.kind = kind;
            this.multi = multi;
        }

        static Bucket of(WriteKind kind) {
            return switch (kind) {
                case INSERT_ONE -> INSERTS;
                case REPLACE_ONE -> REPLACEMENTS;
                case UPDATE_ONE -> UPDATES;
                case UPDATE_MANY -> MULTI_UPDATES;
                case DELETE_ONE -> DELETES;
                case DELETE_MANY -> MULTI_DELETES;
            };
        }

        /** The driver's request type: updateOne and updateMany are one type, deleteOne and deleteMany another. */
        int driverType() {
            return switch (this) {
                case INSERTS -> 0;
                case UPDATES, MULTI_UPDATES -> 1;
                case REPLACEMENTS -> 2;
                case DELETES, MULTI_DELETES -> 3;
            };
        }
    }

    private final String collection;
    private final Class<T> documentClass;
    private final CodecRegistry registry;
    private final Codec<T> codec;
    /** Whether the collection's codec writes {@code _id} first by itself under {@link #COLLECTIBLE}. */
    private final boolean codecPutsIdFirst;

    public WriteCommandEncoder(String collection, Class<T> documentClass, CodecRegistry registry) {
        this.collection = collection;
        this.documentClass = documentClass;
        this.registry = registry;
        this.codec = registry.get(documentClass);
        this.codecPutsIdFirst = codec.getClass() == DocumentCodec.class || codec.getClass() == BsonDocumentCodec.class;
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
    public List<WriteCommand> encode(BulkPlan plan, List<Integer> indices, boolean ordered, CommandOptions options) {
        return encode(plan, indices, ordered, options, false);
    }

    /**
     * As {@link #encode(BulkPlan, List, boolean, CommandOptions)}; with {@code alone}, every update, replace and delete
     * is a command of its own (in the same order), so that the command's counts are the statement's (inserts are
     * grouped as usual: their ids are known).
     */
    public List<WriteCommand> encode(
            BulkPlan plan, List<Integer> indices, boolean ordered, CommandOptions options, boolean alone) {
        Commands commands = new Commands(plan, indices, ordered, options, alone, false);
        List<WriteCommand> all = new ArrayList<>();
        while (commands.hasNext()) {
            all.add(commands.next());
        }
        return all;
    }

    /**
     * The same commands as {@link #encode(BulkPlan, List, boolean, CommandOptions, boolean)}, encoded one at a time as
     * they are asked for, all in one reused buffer: a round of large documents then allocates one command's bytes
     * instead of every command's before the first is sent. The bytes of a command (and the document its
     * {@link WriteCommand#toCommand} returns) are valid until the next {@link Commands#next}: send it, and every resend
     * of its copy, before asking for the next one.
     */
    public Commands commands(
            BulkPlan plan, List<Integer> indices, boolean ordered, CommandOptions options, boolean alone) {
        return new Commands(plan, indices, ordered, options, alone, true);
    }

    /** The commands of one round, encoded on demand, in the order {@link #encode} lists them. */
    public final class Commands implements Iterator<WriteCommand> {
        private final BulkPlan plan;
        private final boolean ordered;
        private final CommandOptions options;
        private final boolean alone;
        private final boolean reuse;
        /** The statements of each part, in the order they are sent: one part when ordered, one per type otherwise. */
        private final List<List<Integer>> parts;

        private int part;
        /** The position in {@code parts.get(part)} of the first statement not yet in a command. */
        private int position;
        /** The buffer of the last command, written over by the next one when {@code reuse}. */
        private @Nullable CommandBuffer spare;

        private Commands(
                BulkPlan plan,
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
                // Unordered: the driver's types in the order each first appears, each type's statements in the
                // caller's order.
                Map<Integer, List<Integer>> byType = new LinkedHashMap<>();
                for (int index : indices) {
                    byType.computeIfAbsent(Bucket.of(plan.sentAs(index)).driverType(), type -> new ArrayList<>())
                            .add(index);
                }
                parts = new ArrayList<>(byType.values());
            }
            skipFinishedParts();
        }

        @Override
        public boolean hasNext() {
            return part < parts.size();
        }

        /** The next command: a run of statements of one bucket, cut where the command is full. */
        @Override
        public WriteCommand next() {
            if (!hasNext()) {
                throw new NoSuchElementException("every command of the round was encoded");
            }
            List<Integer> indices = parts.get(part);
            Bucket bucket = Bucket.of(plan.sentAs(indices.get(position)));
            boolean ownCommand = alone && bucket != Bucket.INSERTS;
            CommandWriter open = new CommandWriter(
                    bucket,
                    ordered,
                    options,
                    ownCommand ? Expected.ONE : expected(plan, indices, position, bucket),
                    reuse ? spare : null);
            open.add(indices.get(position++), plan);
            while (!ownCommand && position < indices.size()) {
                int index = indices.get(position);
                if (Bucket.of(plan.sentAs(index)) != bucket || !open.tryAdd(index, plan)) {
                    break; // another kind of write, or this command is full
                }
                position++;
            }
            skipFinishedParts();
            spare = open.buffer;
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

        private void skipFinishedParts() {
            while (part < parts.size() && position >= parts.get(part).size()) {
                part++;
                position = 0;
            }
        }
    }

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
    private record Expected(long bytes, int statements) {
        static final Expected ONE = new Expected(0, 1);
    }

    private static Expected expected(BulkPlan plan, List<Integer> indices, int from, Bucket bucket) {
        long bytes = 0;
        int count = 0;
        for (int position = from; position < indices.size() && count < MAX_STATEMENTS; position++) {
            int index = indices.get(position);
            if (Bucket.of(plan.sentAs(index)) != bucket) {
                break;
            }
            count++;
            long documentSize = plan.measuredDocumentSize(index);
            bytes += STATEMENT_OVERHEAD_BYTES
                    + (bucket == Bucket.INSERTS ? 0 : FILTER_GUESS_BYTES)
                    + Math.max(documentSize, SMALL_DOCUMENT_GUESS_BYTES);
            if (bytes > MAX_STATEMENT_BYTES) {
                break;
            }
        }
        return new Expected(bytes, count);
    }

    /** One command being written: {@code {<command>: <collection>, ordered: .., <statements>: [...]}}. */
    private final class CommandWriter {
        final Bucket bucket;
        final boolean ordered;
        final CommandBuffer buffer;
        final BsonBinaryWriter writer;
        final Expected expected;
        final int statementsStart;
        int[] indices;
        int count;

        CommandWriter(
                Bucket bucket,
                boolean ordered,
                CommandOptions options,
                Expected expected,
                @Nullable CommandBuffer reused) {
            this.bucket = bucket;
            this.ordered = ordered;
            this.expected = expected;
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
            writer.writeString(bucket.kind.commandName(), collection);
            writer.writeBoolean("ordered", ordered);
            if (options.bypassDocumentValidation() != null) {
                writer.writeBoolean("bypassDocumentValidation", options.bypassDocumentValidation());
            }
            if (options.let() != null) {
                writer.writeName("let");
                BSON_CODEC.encode(writer, options.let(), CONTEXT);
            }
            writer.writeStartArray(bucket.kind.statementsField());
            statementsStart = buffer.getPosition();
        }

        /** Adds the statement, or writes nothing and returns false when the command is full. */
        boolean tryAdd(int index, BulkPlan plan) {
            if (count >= MAX_STATEMENTS) {
                return false;
            }
            writer.mark();
            writeStatement(writer, index, plan);
            if (count > 0 && buffer.getPosition() - statementsStart > MAX_STATEMENT_BYTES) {
                writer.reset(); // back to the mark: the statement's bytes are dropped
                return false;
            }
            if (count == 0 && expected.statements() > 1) {
                // Where the plan measured nothing (updates, deletes) or measured without the _id the guard assigned
                // since, the first statement's size stands for the others: if they clearly need more room than the
                // buffer has, make it at once.
                long first = buffer.getPosition() - statementsStart;
                long all = Math.min(first * expected.statements(), MAX_STATEMENT_BYTES + 2 * first);
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
                    buffer.array(),
                    bodyEnd,
                    Arrays.copyOf(indices, count),
                    !bucket.multi);
        }
    }

    @SuppressWarnings("unchecked")
    private void writeStatement(BsonBinaryWriter writer, int index, BulkPlan plan) {
        WriteRecord<T> write = (WriteRecord<T>) plan.write(index);
        // An UpdateMany/DeleteMany pinned by _id is sent as multi: false / limit: 1 (BulkPlan.sentAs).
        WriteKind kind = plan.sentAs(index);
        if (kind == WriteKind.INSERT_ONE) {
            java.util.Optional<org.bson.BsonValue> appended = plan.appendedId(index);
            if (appended.isPresent()) {
                writeWithAppendedId(writer, write.document(), appended.get());
            } else {
                writeDocument(writer, write.document());
            }
            return;
        }
        writer.writeStartDocument();
        writer.writeName("q");
        plan.writeFilter(index, writer);
        if (kind == WriteKind.DELETE_ONE || kind == WriteKind.DELETE_MANY) {
            writer.writeInt32("limit", kind.isMulti() ? 0 : 1);
            collationAndHint(writer, write);
            writer.writeEndDocument();
            return;
        }
        writer.writeName("u");
        if (kind == WriteKind.REPLACE_ONE) {
            codec.encode(writer, write.document(), CONTEXT); // the driver keeps a replacement's field order
        } else if (write.update() != null) {
            if (!plan.writeConvertedUpdate(index, writer)) {
                BSON_CODEC.encode(writer, toBson(write.update()), CONTEXT);
            }
        } else {
            writer.writeStartArray();
            write.pipeline().forEach(stage -> BSON_CODEC.encode(writer, toBson(stage), CONTEXT));
            writer.writeEndArray();
        }
        if (kind.isMulti()) {
            writer.writeBoolean("multi", true);
        }
        if (write.upsert()) {
            writer.writeBoolean("upsert", true);
        }
        if (write.collation() != null) {
            writer.writeName("collation");
            BSON_CODEC.encode(writer, write.collation().asDocument(), CONTEXT);
        }
        if (write.arrayFilters() != null) {
            writer.writeStartArray("arrayFilters");
            write.arrayFilters().forEach(filter -> BSON_CODEC.encode(writer, toBson(filter), CONTEXT));
            writer.writeEndArray();
        }
        writeHint(writer, write);
        if (write.sort() != null) {
            writer.writeName("sort");
            BSON_CODEC.encode(writer, toBson(write.sort()), CONTEXT);
        }
        writer.writeEndDocument();
    }

    private void collationAndHint(BsonBinaryWriter writer, WriteRecord<T> write) {
        if (write.collation() != null) {
            writer.writeName("collation");
            BSON_CODEC.encode(writer, write.collation().asDocument(), CONTEXT);
        }
        writeHint(writer, write);
    }

    private void writeHint(BsonBinaryWriter writer, WriteRecord<T> write) {
        if (write.hint() != null) {
            writer.writeName("hint");
            BSON_CODEC.encode(writer, toBson(write.hint()), CONTEXT);
        } else if (write.hintString() != null) {
            writer.writeString("hint", write.hintString());
        }
    }

    /**
     * A document to insert, as the driver writes it: read through the collection's codec, then written with its
     * {@code _id} first. Codecs that do that themselves write straight into the command.
     */
    private void writeDocument(BsonBinaryWriter writer, T document) {
        if (codecPutsIdFirst) {
            codec.encode(writer, document, COLLECTIBLE);
        } else if (document instanceof BsonDocument bson) {
            @SuppressWarnings("unchecked")
            Codec<BsonDocument> own = (Codec<BsonDocument>) registry.get(bson.getClass());
            own.encode(writer, bson, COLLECTIBLE);
        } else {
            BSON_CODEC.encode(writer, BsonDocumentWrapper.asBsonDocument(document, registry), COLLECTIBLE);
        }
    }

    /**
     * A document whose object cannot hold the {@code _id} the guard assigned (a record with a null id): its fields as
     * the codec writes them, then {@code _id}, where the driver's {@code IdHoldingBsonWriter} writes the ObjectId it
     * generates (at the end of the top-level document); mongod moves it first when it stores the document.
     */
    private void writeWithAppendedId(BsonBinaryWriter writer, T document, org.bson.BsonValue id) {
        BsonDocument fields = new BsonDocument();
        codec.encode(new org.bson.BsonDocumentWriter(fields), document, COLLECTIBLE);
        if (!fields.containsKey("_id")) {
            fields.append("_id", id);
        }
        BSON_CODEC.encode(writer, fields, CONTEXT);
    }

    /** Room for {@code statementBytes} of statements, the command's own fields and its per-send fields. */
    private static int withMargin(long statementBytes) {
        return (int) Math.min(
                Math.max(MIN_BUFFER_BYTES, statementBytes + statementBytes / 32 + HEADER_AND_TAIL_BYTES),
                Integer.MAX_VALUE - 1024);
    }

    private BsonDocument toBson(Bson bson) {
        return bson instanceof BsonDocument document ? document : bson.toBsonDocument(documentClass, registry);
    }
}
