package io.github.mongowriteguard.internal.command;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.EnumMap;
import java.util.List;
import java.util.Map;

import org.bson.BsonBinaryWriter;
import org.bson.BsonDocument;
import org.bson.RawBsonDocument;
import org.bson.codecs.BsonDocumentCodec;
import org.bson.codecs.Codec;
import org.bson.codecs.EncoderContext;
import org.bson.codecs.configuration.CodecRegistry;
import org.bson.conversions.Bson;
import org.bson.io.BasicOutputBuffer;
import org.jspecify.annotations.Nullable;

import com.mongodb.client.model.Collation;
import com.mongodb.client.model.DeleteManyModel;
import com.mongodb.client.model.DeleteOneModel;
import com.mongodb.client.model.DeleteOptions;
import com.mongodb.client.model.InsertOneModel;
import com.mongodb.client.model.ReplaceOneModel;
import com.mongodb.client.model.ReplaceOptions;
import com.mongodb.client.model.UpdateManyModel;
import com.mongodb.client.model.UpdateOneModel;
import com.mongodb.client.model.UpdateOptions;
import com.mongodb.client.model.WriteModel;

import io.github.mongowriteguard.bulk.BulkPlan;
import io.github.mongowriteguard.bulk.WriteKind;

/**
 * Turns the writes of one round into write commands: one command per kind (insert, single-document update,
 * multi-document update, single delete, multi delete) for an unordered round, consecutive runs of one kind for an
 * ordered one (as the driver splits an ordered bulk), each cut at 100,000 statements or about 16 MiB.
 *
 * <p>Every statement is encoded once, straight into its command's bytes (documents with the collection's codec,
 * filters as the plan read them); the command is sent as those bytes.
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

    private static final BsonDocumentCodec BSON_CODEC = new BsonDocumentCodec();
    private static final EncoderContext CONTEXT = EncoderContext.builder().build();

    /** The commands of an unordered round, in the order they are sent; an ordered round starts a command per change. */
    private enum Bucket {
        INSERTS(WriteCommand.Kind.INSERT, false),
        UPDATES(WriteCommand.Kind.UPDATE, false),
        MULTI_UPDATES(WriteCommand.Kind.UPDATE, true),
        DELETES(WriteCommand.Kind.DELETE, false),
        MULTI_DELETES(WriteCommand.Kind.DELETE, true);

        final WriteCommand.Kind kind;
        final boolean multi;

        Bucket(WriteCommand.Kind kind, boolean multi) {
            this.kind = kind;
            this.multi = multi;
        }

        static Bucket of(WriteKind kind) {
            switch (kind) {
                case INSERT_ONE:
                    return INSERTS;
                case REPLACE_ONE:
                case UPDATE_ONE:
                    return UPDATES;
                case UPDATE_MANY:
                    return MULTI_UPDATES;
                case DELETE_ONE:
                    return DELETES;
                default:
                    return MULTI_DELETES;
            }
        }
    }

    private final String collection;
    private final Class<T> documentClass;
    private final CodecRegistry registry;
    private final Codec<T> codec;

    public WriteCommandEncoder(String collection, Class<T> documentClass, CodecRegistry registry) {
        this.collection = collection;
        this.documentClass = documentClass;
        this.registry = registry;
        this.codec = registry.get(documentClass);
    }

    /**
     * Encodes the given writes of the caller's bulk.
     *
     * @param models  the caller's bulk
     * @param plan    its plan, which holds the filters to send
     * @param indices the indices of this round's writes, in the order they must keep
     * @param ordered whether the round keeps the caller's order (one ordered command per run of one kind)
     */
    public List<WriteCommand> encode(List<? extends WriteModel<? extends T>> models, BulkPlan plan, List<Integer> indices,
                                     boolean ordered) {
        List<WriteCommand> commands = new ArrayList<>();
        if (ordered) {
            CommandWriter open = null;
            for (int index : indices) {
                WriteModel<? extends T> model = models.get(index);
                Bucket bucket = Bucket.of(plan.kind(index));
                if (open == null || open.bucket != bucket || !open.tryAdd(index, model, plan)) {
                    if (open != null) {
                        commands.add(open.finish()); // another kind of write, or this command is full
                    }
                    open = new CommandWriter(bucket, true);
                    open.add(index, model, plan);
                }
            }
            if (open != null) {
                commands.add(open.finish());
            }
            return commands;
        }
        // Unordered: the buckets' commands in the buckets' order.
        Map<Bucket, List<WriteCommand>> done = new EnumMap<>(Bucket.class);
        Map<Bucket, CommandWriter> open = new EnumMap<>(Bucket.class);
        for (int index : indices) {
            WriteModel<? extends T> model = models.get(index);
            Bucket bucket = Bucket.of(plan.kind(index));
            CommandWriter writer = open.get(bucket);
            if (writer == null || !writer.tryAdd(index, model, plan)) {
                if (writer != null) {
                    done.computeIfAbsent(bucket, b -> new ArrayList<>()).add(writer.finish());
                }
                writer = new CommandWriter(bucket, false);
                writer.add(index, model, plan);
                open.put(bucket, writer);
            }
        }
        for (Bucket bucket : Bucket.values()) {
            commands.addAll(done.getOrDefault(bucket, List.of()));
            if (open.containsKey(bucket)) {
                commands.add(open.get(bucket).finish());
            }
        }
        return commands;
    }

    /** One command being written: {@code {<command>: <collection>, ordered: .., <statements>: [...]}}. */
    private final class CommandWriter {
        final Bucket bucket;
        final boolean ordered;
        final BasicOutputBuffer buffer = new BasicOutputBuffer();
        final BsonBinaryWriter writer = new BsonBinaryWriter(buffer);
        final int statementsStart;
        int[] indices = new int[16];
        int count;

        CommandWriter(Bucket bucket, boolean ordered) {
            this.bucket = bucket;
            this.ordered = ordered;
            writer.writeStartDocument();
            writer.writeString(bucket.kind.commandName(), collection);
            writer.writeBoolean("ordered", ordered);
            writer.writeStartArray(bucket.kind.statementsField());
            statementsStart = buffer.getPosition();
        }

        /** Adds the statement, or writes nothing and returns false when the command is full. */
        boolean tryAdd(int index, WriteModel<? extends T> model, BulkPlan plan) {
            if (count >= MAX_STATEMENTS) {
                return false;
            }
            writer.mark();
            writeStatement(writer, index, model, plan);
            if (count > 0 && buffer.getPosition() - statementsStart > MAX_STATEMENT_BYTES) {
                writer.reset(); // back to the mark: the statement's bytes are dropped
                return false;
            }
            if (count == indices.length) {
                indices = Arrays.copyOf(indices, count * 2);
            }
            indices[count++] = index;
            return true;
        }

        /** Adds the first statement of a command: it goes in whatever its size (the planner limits documents). */
        void add(int index, WriteModel<? extends T> model, BulkPlan plan) {
            if (!tryAdd(index, model, plan)) {
                throw new IllegalStateException("an empty command refused a statement");
            }
        }

        WriteCommand finish() {
            writer.writeEndArray();
            writer.writeEndDocument();
            writer.close();
            RawBsonDocument command = new RawBsonDocument(buffer.getInternalBuffer(), 0, buffer.getPosition());
            return new WriteCommand(bucket.kind, collection, ordered, command, Arrays.copyOf(indices, count), !bucket.multi);
        }
    }

    @SuppressWarnings("unchecked")
    private void writeStatement(BsonBinaryWriter writer, int index, WriteModel<? extends T> model, BulkPlan plan) {
        if (model instanceof InsertOneModel) {
            codec.encode(writer, ((InsertOneModel<T>) model).getDocument(), CONTEXT);
            return;
        }
        writer.writeStartDocument();
        writer.writeName("q");
        plan.writeFilter(index, writer);
        if (model instanceof ReplaceOneModel) {
            ReplaceOneModel<T> replace = (ReplaceOneModel<T>) model;
            ReplaceOptions options = replace.getReplaceOptions();
            writer.writeName("u");
            codec.encode(writer, replace.getReplacement(), CONTEXT);
            writer.writeBoolean("multi", false);
            writer.writeBoolean("upsert", options.isUpsert());
            collationAndHint(writer, options.getCollation(), options.getHint(), options.getHintString());
        } else if (model instanceof UpdateOneModel || model instanceof UpdateManyModel) {
            boolean multi = model instanceof UpdateManyModel;
            Bson update;
            List<? extends Bson> pipeline;
            UpdateOptions options;
            if (multi) {
                UpdateManyModel<T> many = (UpdateManyModel<T>) model;
                update = many.getUpdate();
                pipeline = many.getUpdatePipeline();
                options = many.getOptions();
            } else {
                UpdateOneModel<T> one = (UpdateOneModel<T>) model;
                update = one.getUpdate();
                pipeline = one.getUpdatePipeline();
                options = one.getOptions();
            }
            if (update != null) {
                writeBson(writer, "u", update);
            } else {
                writer.writeStartArray("u");
                pipeline.forEach(stage -> writeBson(writer, null, stage));
                writer.writeEndArray();
            }
            writer.writeBoolean("multi", multi);
            writer.writeBoolean("upsert", options.isUpsert());
            if (options.getArrayFilters() != null) {
                writer.writeStartArray("arrayFilters");
                options.getArrayFilters().forEach(filter -> writeBson(writer, null, filter));
                writer.writeEndArray();
            }
            collationAndHint(writer, options.getCollation(), options.getHint(), options.getHintString());
        } else {
            boolean multi = model instanceof DeleteManyModel;
            DeleteOptions options = multi ? ((DeleteManyModel<T>) model).getOptions() : ((DeleteOneModel<T>) model).getOptions();
            writer.writeInt32("limit", multi ? 0 : 1);
            collationAndHint(writer, options.getCollation(), options.getHint(), options.getHintString());
        }
        writer.writeEndDocument();
    }

    private void collationAndHint(BsonBinaryWriter writer, @Nullable Collation collation, @Nullable Bson hint,
                                  @Nullable String hintString) {
        if (collation != null) {
            writer.writeName("collation");
            BSON_CODEC.encode(writer, collation.asDocument(), CONTEXT);
        }
        if (hint != null) {
            writeBson(writer, "hint", hint);
        } else if (hintString != null) {
            writer.writeString("hint", hintString);
        }
    }

    /** Writes {@code bson} as the field {@code name}, or as the next array element when {@code name} is null. */
    private void writeBson(BsonBinaryWriter writer, @Nullable String name, Bson bson) {
        if (name != null) {
            writer.writeName(name);
        }
        BsonDocument document = bson instanceof BsonDocument ? (BsonDocument) bson : bson.toBsonDocument(documentClass, registry);
        BSON_CODEC.encode(writer, document, CONTEXT);
    }
}
