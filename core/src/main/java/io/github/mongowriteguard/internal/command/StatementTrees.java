package io.github.mongowriteguard.internal.command;

import io.github.mongowriteguard.bulk.WriteKind;
import io.github.mongowriteguard.internal.plan.DocumentShortcuts;
import io.github.mongowriteguard.internal.plan.PlannedBulk;
import io.github.mongowriteguard.internal.plan.WriteRecord;
import java.util.Map;
import org.bson.BsonBoolean;
import org.bson.BsonDocument;
import org.bson.BsonString;
import org.bson.BsonType;
import org.bson.BsonValue;
import org.bson.Document;
import org.bson.codecs.BsonDocumentCodec;
import org.bson.codecs.BsonValueCodecProvider;
import org.bson.codecs.configuration.CodecConfigurationException;
import org.bson.codecs.configuration.CodecRegistries;
import org.bson.codecs.configuration.CodecRegistry;
import org.bson.conversions.Bson;
import org.jspecify.annotations.Nullable;

/**
 * One statement as the BSON tree whose encoding is the bytes {@link StatementWriter} writes for it, or null when that is
 * not known for sure. An insert: its document with {@code _id} first (as the driver's insert writes it, encoding
 * collectible documents). A replacement: {@code {q, u, upsert (when true), collation, hint, sort}} in that order, with
 * {@code q} the plan's filter and {@code u} the replacement in its own field order (the driver encodes a replacement as
 * it is: its {@code _id} stays where the caller put it).
 *
 * <p>A document is a tree only as a {@code Document} of the plain types that {@link DocumentShortcuts} converts, or as
 * a plain {@code BsonDocument} under a registry that encodes every BSON type with the driver's own codecs, and in a
 * collection of that class (the bytes path encodes a replacement with the collection's codec). Anything else (a POJO,
 * an {@code _id} the guard appends, a hint or sort of another class) is null: the command is the guard's bytes.
 *
 * @param <T> the collection's document class
 */
final class StatementTrees<T> {
    private static final CodecRegistry DRIVER_COMMAND_CODECS =
            CodecRegistries.fromProviders(new BsonValueCodecProvider());

    private final @Nullable DocumentShortcuts documents;
    private final boolean bsonCollection;
    private final boolean standardBsonCodecs;

    StatementTrees(Class<T> documentClass, CodecRegistry registry) {
        this.documents = documentClass == Document.class ? new DocumentShortcuts(registry) : null;
        this.bsonCollection = documentClass == BsonDocument.class;
        this.standardBsonCodecs = encodesBsonAsTheDriver(registry);
    }

    /**
     * The statement of write {@code index} as a tree nesting at most {@code limit} levels (itself included; the size
     * arithmetic checks the whole tree again), or null.
     */
    @Nullable
    BsonDocument statement(PlannedBulk plan, int index, int limit) {
        WriteKind kind = plan.sentAs(index);
        if (kind == WriteKind.INSERT_ONE) {
            return plan.appendedId(index).isPresent()
                    ? null
                    : insert(plan.write(index).document(), limit);
        }
        return kind == WriteKind.REPLACE_ONE ? replacement(plan, index, limit) : null;
    }

    /** The document of an insert with {@code _id} first. */
    private @Nullable BsonDocument insert(Object document, int limit) {
        if (documents != null) {
            return documents.documentToInsert(document, limit);
        }
        if (!standardBsonCodecs || document.getClass() != BsonDocument.class) {
            return null;
        }
        BsonDocument fields = (BsonDocument) document;
        BsonValue id = fields.get("_id");
        if (id == null || fields.getFirstKey().equals("_id")) {
            return fields; // the caller's document, shared: written as it is
        }
        BsonDocument idFirst = new BsonDocument(fields.size() * 4 / 3 + 1);
        idFirst.put("_id", id);
        for (Map.Entry<String, BsonValue> field : fields.entrySet()) {
            if (!field.getKey().equals("_id")) {
                idFirst.put(field.getKey(), field.getValue());
            }
        }
        return idFirst;
    }

    /** The fields in {@link StatementWriter#write}'s order for a replacement (which is never multi, never has arrayFilters). */
    private @Nullable BsonDocument replacement(PlannedBulk plan, int index, int limit) {
        WriteRecord<?> write = plan.write(index);
        if (write.arrayFilters() != null) {
            return null;
        }
        BsonDocument replacement = asIs(write.document(), limit - 1);
        if (replacement == null) {
            return null;
        }
        BsonDocument statement = new BsonDocument(8);
        statement.put("q", plan.filterToSend(index));
        statement.put("u", replacement);
        if (write.upsert()) {
            statement.put("upsert", BsonBoolean.TRUE);
        }
        if (write.collation() != null) {
            statement.put("collation", write.collation().asDocument());
        }
        if (write.hint() != null) {
            BsonDocument hint = plainBson(write.hint());
            if (hint == null) {
                return null;
            }
            statement.put("hint", hint);
        } else if (write.hintString() != null) {
            statement.put("hint", new BsonString(write.hintString()));
        }
        if (write.sort() != null) {
            BsonDocument sort = plainBson(write.sort());
            if (sort == null) {
                return null;
            }
            statement.put("sort", sort);
        }
        return statement;
    }

    /** A replacement in its own field order, as the collection's codec writes it. */
    private @Nullable BsonDocument asIs(Object document, int limit) {
        if (documents != null) {
            return documents.replacement(document, limit);
        }
        if (bsonCollection && standardBsonCodecs && document.getClass() == BsonDocument.class) {
            return (BsonDocument) document; // the caller's document, shared: written as it is
        }
        return null;
    }

    /**
     * A hint or sort the bytes path writes with the driver's {@code BsonDocumentCodec} as it is: a plain
     * {@code BsonDocument} (what {@code Indexes} and {@code Sorts} build); null for another class, which the bytes path
     * converts with the collection's codecs.
     */
    private static @Nullable BsonDocument plainBson(Bson bson) {
        return bson.getClass() == BsonDocument.class ? (BsonDocument) bson : null;
    }

    /**
     * Whether the collection's codecs write a {@code BsonDocument} as the driver writes a command's values: the
     * document codec is {@code BsonDocumentCodec}, and every BSON type's value class has the codec class the driver's
     * fixed {@code BsonValueCodecProvider} registry gives it.
     */
    static boolean encodesBsonAsTheDriver(CodecRegistry registry) {
        try {
            if (registry.get(BsonDocument.class).getClass() != BsonDocumentCodec.class) {
                return false;
            }
            for (BsonType type : BsonType.values()) {
                Class<?> values = BsonValueCodecProvider.getBsonTypeClassMap().get(type);
                if (values != null
                        && registry.get(values).getClass()
                                != DRIVER_COMMAND_CODECS.get(values).getClass()) {
                    return false;
                }
            }
            return true;
        } catch (CodecConfigurationException missingCodec) {
            return false;
        }
    }
}
