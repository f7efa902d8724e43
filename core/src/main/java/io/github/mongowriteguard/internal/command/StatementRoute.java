package io.github.mongowriteguard.internal.command;

import io.github.mongowriteguard.bulk.WriteKind;
import io.github.mongowriteguard.internal.plan.PlainValue;
import io.github.mongowriteguard.internal.plan.PlannedBulk;
import io.github.mongowriteguard.internal.plan.WriteRecord;
import org.bson.BsonDocument;
import org.bson.Document;
import org.bson.codecs.DocumentCodec;
import org.bson.codecs.configuration.CodecRegistry;
import org.bson.conversions.Bson;

/**
 * The one place that decides how a statement is encoded, from its shape: as a BSON tree the driver encodes
 * ({@link TreeCommands}), as bytes the guard writes by hand ({@link PlainStatementBytes}), or through the codecs and
 * the driver's writer ({@link StatementWriter#write}), which writes every statement the driver writes. All three give
 * the same bytes; the route is only about cost.
 *
 * <p>The route is a first choice. Each route checks the values as it walks them ({@link PlainValue}), and a value it
 * cannot write sends the statement down to the next route: a command of trees whose statement cannot be a tree is
 * written as bytes instead, and a statement of hand-written bytes with a value that is not plain goes through the
 * codecs. A command's body follows its first statement: trees when that statement's route is {@link Route#TREE} (every
 * statement of the command is then a tree, or the command is bytes), else bytes, each statement by its route with
 * trees not allowed.
 */
final class StatementRoute {
    /**
     * A command of inserts is sent as trees when its first document measured at least this many bytes: at every size.
     * Measured with {@code lab payloads} (100,000 inserts, the calling thread's allocation against the driver's), trees
     * against the guard's bytes: 64-byte documents 0.60 against 0.73-0.81, 1 KiB 0.67 against 1.14: the bytes path
     * allocates the command twice (its buffer, then the driver's temporary copy) and looks each value's codec up in the
     * registry; a tree is the document's values once, and the driver encodes it without a copy.
     */
    static final long INSERT_TREES_FROM_BYTES = 0;

    /**
     * A command of replacements is sent as trees when its first replacement measured at least this many bytes. A
     * replacement's statement is three trees (the statement, its filter, the document) where an insert's is one: for
     * small documents they cost what the copy saves. Measured on the cost-free server ({@code lab perf}, 60-byte
     * replace-upserts, trees everywhere against the bytes): time 1.09-1.30 of the driver's against 0.90-1.22,
     * allocation 1.01-1.08 against 0.99-1.02; encoding and the driver's encoding alone, 10,000 replace-upserts of about
     * 1 KiB: the same time, 0.42 of the allocation (1,452 against 3,479 bytes a write).
     */
    static final long REPLACEMENT_TREES_FROM_BYTES = 1024;

    /** How a statement is encoded. */
    enum Route {
        /** A BSON tree the driver encodes straight into its message. */
        TREE,
        /** Bytes the guard writes by hand, without a writer or a codec lookup per field. */
        HAND_BYTES,
        /** The collection's codecs through the driver's {@code BsonBinaryWriter}. */
        CODEC_WRITER
    }

    private final Class<?> documentClass;
    /** Whether the registry writes the plain Java values as the driver's standard codecs do. */
    private final boolean standardCodecs;
    /** Whether the registry writes a {@code BsonDocument} as the driver writes a command's values. */
    private final boolean bsonAsTheDriver;
    /** Whether the registry's codec for the collection's class is the standard one for {@code Document}. */
    private final boolean documentCollection;

    private final long insertTreesFrom;
    private final long replacementTreesFrom;

    /**
     * @param insertTreesFrom      the first document's measured size from which a command of inserts is sent as trees
     *                             (0: every command whose statements allow it; Long.MAX_VALUE: never)
     * @param replacementTreesFrom the same for a command of replacements
     */
    StatementRoute(Class<?> documentClass, CodecRegistry registry, long insertTreesFrom, long replacementTreesFrom) {
        this.documentClass = documentClass;
        this.standardCodecs = PlainValue.standardCodecs(registry);
        this.bsonAsTheDriver = StatementTrees.encodesBsonAsTheDriver(registry);
        this.documentCollection = standardCodecs && registry.get(documentClass).getClass() == DocumentCodec.class;
        this.insertTreesFrom = insertTreesFrom;
        this.replacementTreesFrom = replacementTreesFrom;
    }

    /** With the measured thresholds. */
    StatementRoute(Class<?> documentClass, CodecRegistry registry) {
        this(documentClass, registry, INSERT_TREES_FROM_BYTES, REPLACEMENT_TREES_FROM_BYTES);
    }

    /**
     * The route of write {@code index}'s statement.
     *
     * @param treesAllowed whether the statement may be a tree: true for the first statement of a command, false in a
     *                     command of bytes
     */
    Route of(PlannedBulk plan, int index, boolean treesAllowed) {
        WriteKind kind = plan.sentAs(index);
        WriteRecord<?> write = plan.write(index);
        return switch (kind) {
            case INSERT_ONE ->
                treesAllowed
                                && plan.measuredDocumentSize(index) >= insertTreesFrom
                                && plan.appendedId(index).isEmpty()
                                && treeable(write.document(), false)
                        ? Route.TREE
                        : Route.CODEC_WRITER;
            case REPLACE_ONE -> {
                if (treesAllowed
                        && plan.measuredDocumentSize(index) >= replacementTreesFrom
                        && write.arrayFilters() == null
                        && plainOrAbsent(write.hint())
                        && plainOrAbsent(write.sort())
                        && treeable(write.document(), true)) {
                    yield Route.TREE;
                }
                yield !hasOptions(write)
                                && documentCollection
                                && write.document().getClass() == Document.class
                        ? Route.HAND_BYTES
                        : Route.CODEC_WRITER;
            }
            case UPDATE_ONE, UPDATE_MANY ->
                !hasOptions(write) && handWrittenUpdate(write.update(), plan, index)
                        ? Route.HAND_BYTES
                        : Route.CODEC_WRITER;
            case DELETE_ONE, DELETE_MANY -> hasOptions(write) ? Route.CODEC_WRITER : Route.HAND_BYTES;
        };
    }

    /**
     * Whether a document can be a tree: a {@code Document} of a {@code Document} collection under the standard codecs,
     * or a plain {@code BsonDocument} under a registry that writes BSON as the driver does (of a {@code BsonDocument}
     * collection, for a replacement, which the bytes path writes with the collection's codec).
     */
    private boolean treeable(Object document, boolean replacement) {
        if (documentClass == Document.class) {
            return standardCodecs && document.getClass() == Document.class;
        }
        return bsonAsTheDriver
                && document.getClass() == BsonDocument.class
                && (!replacement || documentClass == BsonDocument.class);
    }

    /** An update written by hand: the plan's converted copy, a plain {@code BsonDocument}, or a plain {@code Document}. */
    private boolean handWrittenUpdate(Bson update, PlannedBulk plan, int index) {
        if (update == null) {
            return false; // a pipeline
        }
        return plan.convertedUpdate(index) != null
                || update.getClass() == BsonDocument.class
                || (standardCodecs && update.getClass() == Document.class);
    }

    /** The options hand-written bytes leave to the codec writer: collation, hint, array filters, sort. */
    private static boolean hasOptions(WriteRecord<?> write) {
        return write.collation() != null
                || write.hint() != null
                || write.hintString() != null
                || write.arrayFilters() != null
                || write.sort() != null;
    }

    /** A hint or sort a tree carries as it is: none, or a plain {@code BsonDocument} (what {@code Indexes} builds). */
    private static boolean plainOrAbsent(Bson bson) {
        return bson == null || bson.getClass() == BsonDocument.class;
    }
}
