package io.github.mongowriteguard.internal.command;

import java.util.ArrayList;
import java.util.List;

import org.bson.BsonArray;
import org.bson.BsonBoolean;
import org.bson.BsonDocument;
import org.bson.BsonInt32;
import org.bson.BsonString;
import org.bson.BsonValue;
import org.bson.codecs.Codec;
import org.bson.RawBsonDocument;
import org.bson.codecs.BsonDocumentCodec;
import org.bson.codecs.configuration.CodecRegistry;
import org.bson.conversions.Bson;

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

/**
 * Turns the writes of one round into write commands: one command per kind (insert, single-document update,
 * multi-document update, single delete, multi delete) for an unordered round, consecutive runs of one kind for an
 * ordered one (as the driver splits an ordered bulk), each cut at 100,000 statements or about 16 MiB.
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

    private static final BsonDocumentCodec STATEMENT_CODEC = new BsonDocumentCodec();

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
     * @param indices the indices of this round's writes, in the order they must keep
     * @param ordered whether the round keeps the caller's order (one ordered command per run of one kind)
     */
    public List<WriteCommand> encode(List<? extends WriteModel<? extends T>> models, List<Integer> indices, boolean ordered) {
        List<WriteCommand> commands = new ArrayList<>();
        if (ordered) {
            Group group = null;
            for (int index : indices) {
                Statement statement = statement(models.get(index));
                if (group == null || group.kind != statement.kind || group.multi != statement.multi || group.full(statement)) {
                    if (group != null) {
                        commands.add(group.toCommand(true));
                    }
                    group = new Group(statement.kind, statement.multi);
                }
                group.add(index, statement);
            }
            if (group != null) {
                commands.add(group.toCommand(true));
            }
            return commands;
        }
        // Unordered: inserts, single updates, multi updates, single deletes, multi deletes.
        List<List<Group>> buckets = new ArrayList<>();
        for (int i = 0; i < 5; i++) {
            buckets.add(new ArrayList<>());
        }
        for (int index : indices) {
            Statement statement = statement(models.get(index));
            List<Group> bucket = buckets.get(statement.bucket());
            Group group = bucket.isEmpty() ? null : bucket.get(bucket.size() - 1);
            if (group == null || group.full(statement)) {
                group = new Group(statement.kind, statement.multi);
                bucket.add(group);
            }
            group.add(index, statement);
        }
        for (List<Group> bucket : buckets) {
            for (Group group : bucket) {
                commands.add(group.toCommand(false));
            }
        }
        return commands;
    }

    private final class Group {
        final WriteCommand.Kind kind;
        final boolean multi;
        final BsonArray statements = new BsonArray();
        final List<Integer> indices = new ArrayList<>();
        long bytes;

        Group(WriteCommand.Kind kind, boolean multi) {
            this.kind = kind;
            this.multi = multi;
        }

        boolean full(Statement next) {
            return indices.size() >= MAX_STATEMENTS || (!indices.isEmpty() && bytes + next.bytes > MAX_STATEMENT_BYTES);
        }

        void add(int index, Statement statement) {
            statements.add(statement.document);
            indices.add(index);
            bytes += statement.bytes;
        }

        WriteCommand toCommand(boolean ordered) {
            return new WriteCommand(kind, collection, ordered, statements, indices.stream().mapToInt(Integer::intValue).toArray(), !multi);
        }
    }

    private record Statement(WriteCommand.Kind kind, boolean multi, BsonDocument document, long bytes) {
        int bucket() {
            switch (kind) {
                case INSERT:
                    return 0;
                case UPDATE:
                    return multi ? 2 : 1;
                default:
                    return multi ? 4 : 3;
            }
        }
    }

    @SuppressWarnings("unchecked")
    private Statement statement(WriteModel<? extends T> model) {
        if (model instanceof InsertOneModel) {
            RawBsonDocument document = new RawBsonDocument(((InsertOneModel<T>) model).getDocument(), codec);
            return new Statement(WriteCommand.Kind.INSERT, false, document, document.getByteBuffer().remaining());
        }
        BsonDocument statement;
        boolean multi = false;
        WriteCommand.Kind kind = WriteCommand.Kind.UPDATE;
        if (model instanceof ReplaceOneModel) {
            ReplaceOneModel<T> replace = (ReplaceOneModel<T>) model;
            ReplaceOptions options = replace.getReplaceOptions();
            statement = new BsonDocument("q", filter(replace.getFilter()))
                .append("u", encode(replace.getReplacement()))
                .append("multi", BsonBoolean.FALSE)
                .append("upsert", BsonBoolean.valueOf(options.isUpsert()));
            collationAndHint(statement, options.getCollation(), options.getHint(), options.getHintString());
        } else if (model instanceof UpdateOneModel || model instanceof UpdateManyModel) {
            multi = model instanceof UpdateManyModel;
            Bson filter;
            Bson update;
            List<? extends Bson> pipeline;
            UpdateOptions options;
            if (multi) {
                UpdateManyModel<T> many = (UpdateManyModel<T>) model;
                filter = many.getFilter();
                update = many.getUpdate();
                pipeline = many.getUpdatePipeline();
                options = many.getOptions();
            } else {
                UpdateOneModel<T> one = (UpdateOneModel<T>) model;
                filter = one.getFilter();
                update = one.getUpdate();
                pipeline = one.getUpdatePipeline();
                options = one.getOptions();
            }
            BsonValue u;
            if (update != null) {
                u = filter(update);
            } else {
                BsonArray stages = new BsonArray();
                pipeline.forEach(stage -> stages.add(filter(stage)));
                u = stages;
            }
            statement = new BsonDocument("q", filter(filter)).append("u", u)
                .append("multi", BsonBoolean.valueOf(multi))
                .append("upsert", BsonBoolean.valueOf(options.isUpsert()));
            if (options.getArrayFilters() != null) {
                BsonArray arrayFilters = new BsonArray();
                options.getArrayFilters().forEach(f -> arrayFilters.add(filter(f)));
                statement.append("arrayFilters", arrayFilters);
            }
            collationAndHint(statement, options.getCollation(), options.getHint(), options.getHintString());
        } else if (model instanceof DeleteOneModel || model instanceof DeleteManyModel) {
            kind = WriteCommand.Kind.DELETE;
            multi = model instanceof DeleteManyModel;
            Bson filter = multi ? ((DeleteManyModel<T>) model).getFilter() : ((DeleteOneModel<T>) model).getFilter();
            DeleteOptions options = multi ? ((DeleteManyModel<T>) model).getOptions() : ((DeleteOneModel<T>) model).getOptions();
            statement = new BsonDocument("q", filter(filter)).append("limit", new BsonInt32(multi ? 0 : 1));
            collationAndHint(statement, options.getCollation(), options.getHint(), options.getHintString());
        } else {
            throw new IllegalArgumentException("unsupported write model " + model.getClass().getName()
                + "; the guard supports InsertOne, ReplaceOne, UpdateOne, UpdateMany, DeleteOne and DeleteMany");
        }
        // Encoded once here; the driver copies the bytes into the command as they are.
        RawBsonDocument raw = new RawBsonDocument(statement, STATEMENT_CODEC);
        return new Statement(kind, multi, raw, raw.getByteBuffer().remaining());
    }

    private void collationAndHint(BsonDocument statement, Collation collation, Bson hint, String hintString) {
        if (collation != null) {
            statement.append("collation", collation.asDocument());
        }
        if (hint != null) {
            statement.append("hint", filter(hint));
        } else if (hintString != null) {
            statement.append("hint", new BsonString(hintString));
        }
    }

    private BsonDocument filter(Bson bson) {
        return bson.toBsonDocument(documentClass, registry);
    }

    private BsonDocument encode(T document) {
        return new RawBsonDocument(document, codec);
    }
}
