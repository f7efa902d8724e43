package io.github.mongowriteguard.internal.command;

import io.github.mongowriteguard.bulk.BulkPlan;
import io.github.mongowriteguard.bulk.DocumentShortcuts;
import io.github.mongowriteguard.bulk.WriteRecord;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import org.bson.BsonArray;
import org.bson.BsonDocument;
import org.bson.BsonType;
import org.bson.BsonValue;
import org.bson.Document;
import org.bson.codecs.BsonDocumentCodec;
import org.bson.codecs.BsonValueCodecProvider;
import org.bson.codecs.configuration.CodecConfigurationException;
import org.bson.codecs.configuration.CodecRegistries;
import org.bson.codecs.configuration.CodecRegistry;
import org.jspecify.annotations.Nullable;

/**
 * Insert commands whose statements are BSON trees that the driver encodes once, straight into its message
 * ({@link TreeCommandBody}), instead of bytes the guard encoded and the driver copies again: used wherever the
 * statements allow it (see {@link #FROM_DOCUMENT_BYTES}).
 *
 * <p>Only where the bytes are known to be the ones {@link EncodedCommandWriter} writes, so that the server receives the
 * same command and the command is cut at the same statement: a {@code Document} of the plain types that
 * {@link DocumentShortcuts} converts, or a plain {@code BsonDocument} under a registry that encodes every BSON type
 * with the driver's own codecs, each with its {@code _id} first (as the driver's insert writes it, encoding collectible
 * documents) and no deeper than the driver writes it two levels down the command; each tree's size counted exactly by
 * {@link BsonTreeSize}. Anything else (a POJO, an {@code _id} the guard appends, a nested raw document or wrapper, a
 * string with surrogates) makes the command's statements bytes the guard encodes, as before.
 *
 * @param <T> the collection's document class
 */
final class InsertTrees<T> {
    /**
     * A command of inserts is sent as trees when its first document measured at least this many bytes: at every size.
     * Measured with {@code lab payloads} (100,000 inserts, the calling thread's allocation against the driver's), trees
     * against the guard's bytes: 64-byte documents 0.60 against 0.73-0.81, 1 KiB 0.67 against 1.14: the bytes path
     * allocates the command twice (its buffer, then the driver's temporary copy) and looks each value's codec up in the
     * registry; a tree is the document's values once, and the driver encodes it without a copy.
     */
    static final long FROM_DOCUMENT_BYTES = 0;

    /** The statements sit at level 3 (command, array, statement) where the driver's writer allows 1,024 levels. */
    private static final int STATEMENT_DEPTH_LIMIT = EncodedCommandWriter.DRIVER_MAX_DEPTH - 2;

    private static final CodecRegistry DRIVER_COMMAND_CODECS =
            CodecRegistries.fromProviders(new BsonValueCodecProvider());

    private final @Nullable DocumentShortcuts documents;
    private final boolean standardBsonCodecs;
    private final long fromDocumentBytes;

    /**
     * @param fromDocumentBytes the first document's measured size from which a command is sent as trees (0: every
     *                          command whose statements allow it, for tests)
     */
    InsertTrees(Class<T> documentClass, CodecRegistry registry, long fromDocumentBytes) {
        this.documents = documentClass == Document.class ? new DocumentShortcuts(registry) : null;
        this.standardBsonCodecs = encodesBsonAsTheDriver(registry);
        this.fromDocumentBytes = fromDocumentBytes;
    }

    /** A command built from trees: the command, and the position in the round's indices after its last statement. */
    record Built(WriteCommand command, int next) {}

    /** Whether the command starting with insert {@code index} is worth sending as trees. */
    boolean worthIt(BulkPlan plan, int index) {
        return plan.measuredDocumentSize(index) >= fromDocumentBytes;
    }

    /**
     * The inserts from {@code indices.get(from)} as one command of trees, cut where {@link EncodedCommandWriter} cuts
     * (at {@link WriteCommandEncoder#MAX_STATEMENTS}, or before the statement that takes the statements' bytes past
     * {@link WriteCommandEncoder#MAX_STATEMENT_BYTES}; a first statement goes in whatever its size), or null when a
     * statement on the way cannot be a tree of known size.
     */
    @Nullable
    Built command(CommandHead head, BulkPlan plan, List<Integer> indices, int from) {
        BsonArray statements = new BsonArray(Math.min(indices.size() - from, 64));
        int[] taken = new int[Math.min(indices.size() - from, 64)];
        long bytes = 0;
        int count = 0;
        int position = from;
        while (position < indices.size() && count < WriteCommandEncoder.MAX_STATEMENTS) {
            int index = indices.get(position);
            if (StatementBucket.of(plan.sentAs(index)) != StatementBucket.INSERTS) {
                break;
            }
            BsonDocument tree = plan.appendedId(index).isPresent() ? null : tree(plan.write(index));
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
                true);
        return new Built(command, position);
    }

    /** The document of an insert as a tree with {@code _id} first, or null when it is not one of the forms above. */
    private @Nullable BsonDocument tree(WriteRecord<?> write) {
        Object document = write.document();
        if (documents != null) {
            return documents.documentToInsert(document, STATEMENT_DEPTH_LIMIT);
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

    /**
     * Whether the collection's codecs write a {@code BsonDocument} as the driver writes a command's values: the
     * document codec is {@code BsonDocumentCodec}, and every BSON type's value class has the codec class the driver's
     * fixed {@code BsonValueCodecProvider} registry gives it.
     */
    private static boolean encodesBsonAsTheDriver(CodecRegistry registry) {
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
