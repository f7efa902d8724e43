package io.github.mongowriteguard.internal.plan;

import io.github.mongowriteguard.exception.InvalidBulkException;
import java.util.ArrayDeque;
import java.util.Iterator;
import java.util.Map;
import org.bson.BsonArray;
import org.bson.BsonDocument;
import org.bson.BsonSerializationException;
import org.bson.BsonValue;
import org.bson.codecs.configuration.CodecRegistry;
import org.bson.conversions.Bson;
import org.jspecify.annotations.Nullable;

/**
 * How deep documents and arrays nest, counted as the driver's {@code BsonWriter} counts them, and the driver's limit.
 *
 * <p>The driver refuses to write a value nested deeper than {@code BsonWriterSettings}' maximum serialization depth
 * (1,024 levels, the default of {@code org.bson.BsonWriterSettings}) with a {@link BsonSerializationException}
 * ("Maximum serialization depth exceeded ..."), counting from the outermost document it writes. A document to insert
 * is the outermost document of its OP_MSG sequence entry, so it may have 1,024 levels; a filter, an update, a
 * replacement or the {@code let} document sits one level down (in the statement, or in the {@code findAndModify}
 * command), so it may have 1,023; a pipeline stage or an array filter two levels down, 1,022. The guard refuses exactly
 * these, with the driver's exception, before anything is sent, and counts without recursion, so no nesting makes it
 * throw {@link StackOverflowError}.
 *
 * <p>Only documents and lists the walk can see ({@code Map}s such as {@code Document}, {@code BsonDocument}, {@code
 * Iterable}s such as {@code List} and {@code BsonArray}) are counted; other values (POJOs) are left to the codec, whose
 * writer applies the same limit.
 *
 * <p>The planner checks every part of a write with it; the guard's executors check a call's option documents with
 * {@link #checkOption}. Public for them only: not an API to build on.
 */
public final class NestingDepth {

    /** The driver's limit: the default of {@code org.bson.BsonWriterSettings#getMaxSerializationDepth()}. */
    static final int DRIVER_MAX_DEPTH = 1024;

    /** Levels a document to insert may have. */
    static final int DOCUMENT = DRIVER_MAX_DEPTH;

    /** Levels a filter, an update, a replacement or {@code let} may have (one level inside the statement). */
    static final int STATEMENT_PART = DRIVER_MAX_DEPTH - 1;

    /** Levels a pipeline stage or an array filter may have (inside an array inside the statement). */
    static final int STATEMENT_ELEMENT = DRIVER_MAX_DEPTH - 2;

    /** The message of the driver's {@code AbstractBsonWriter} when a value nests too deep. */
    static final String DRIVER_MESSAGE =
            "Maximum serialization depth exceeded (does the object being serialized have a circular reference?).";

    private NestingDepth() {}

    /**
     * Levels the walk goes down by recursion before it hands over to {@link #ofWithoutRecursion}: deep enough for any
     * document seen in practice, shallow enough that no thread's stack can overflow.
     */
    private static final int RECURSION_LEVELS = 64;

    /**
     * The levels of documents and arrays in {@code value}, itself included (a flat document has 1, a scalar 0); once
     * past {@code limit} it stops counting and returns {@code limit + 1}. Any depth, even a cycle, ends.
     *
     * <p>The first {@value #RECURSION_LEVELS} levels are walked by recursion, whose iterators live in one frame each and
     * allocate nothing once compiled (the planner walks every filter and update of a bulk); a value that goes deeper is
     * walked again with an explicit stack, so no nesting makes it throw {@link StackOverflowError}.
     */
    static int of(@Nullable Object value, int limit) {
        if (!isContainer(value)) {
            return 0;
        }
        if (limit < 1) {
            return 1;
        }
        int levels = Math.min(limit, RECURSION_LEVELS);
        int depth = walk(value, 1, levels);
        if (depth <= levels) {
            return depth;
        }
        return levels == limit ? limit + 1 : ofWithoutRecursion(value, limit);
    }

    /**
     * The deepest level reached below {@code container}, which sits at {@code level}; {@code cap + 1} as soon as a
     * document or array sits deeper than {@code cap}. One loop per kind of container, each with its own iterator, so
     * that the compiler can keep the iterator off the heap.
     */
    private static int walk(Object container, int level, int cap) {
        int deepest = level;
        if (container instanceof BsonDocument document) {
            for (Map.Entry<String, BsonValue> field : document.entrySet()) { // the entry set the codec reads too
                deepest = Math.max(deepest, below(field.getValue(), level, cap));
                if (deepest > cap) {
                    return deepest;
                }
            }
        } else if (container instanceof BsonArray array) {
            for (int i = 0, size = array.size(); i < size; i++) {
                deepest = Math.max(deepest, below(array.get(i), level, cap));
                if (deepest > cap) {
                    return deepest;
                }
            }
        } else if (container instanceof Map<?, ?> map) {
            for (Map.Entry<?, ?> field : map.entrySet()) {
                deepest = Math.max(deepest, below(field.getValue(), level, cap));
                if (deepest > cap) {
                    return deepest;
                }
            }
        } else {
            for (Object element : (Iterable<?>) container) {
                deepest = Math.max(deepest, below(element, level, cap));
                if (deepest > cap) {
                    return deepest;
                }
            }
        }
        return deepest;
    }

    /** The deepest level reached by {@code child} of a container at {@code level}: {@code level} for a scalar. */
    private static int below(@Nullable Object child, int level, int cap) {
        if (!isContainer(child)) {
            return level;
        }
        return level == cap ? cap + 1 : walk(child, level + 1, cap);
    }

    /** Whether the walk can see into {@code value}: a document or a list. */
    private static boolean isContainer(@Nullable Object value) {
        if (value instanceof BsonValue) {
            // Checked against the two classes first: for the scalars most fields hold, a failed check against a class
            // is a load and a compare, against an interface (Map, Iterable) a scan of the value's interfaces.
            return value instanceof BsonDocument || value instanceof BsonArray;
        }
        return value instanceof Map<?, ?> || value instanceof Iterable<?>; // BsonDocument is a Map, BsonArray a List
    }

    /** {@link #of} with an explicit stack of iterators instead of recursion, for values deeper than it recurses. */
    private static int ofWithoutRecursion(Object value, int limit) {
        Iterator<?> top = children(value);
        if (top == null) {
            return 0;
        }
        ArrayDeque<Iterator<?>> open = new ArrayDeque<>();
        open.push(top);
        int deepest = 1;
        while (!open.isEmpty()) {
            Iterator<?> current = open.peek();
            if (!current.hasNext()) {
                open.pop();
                continue;
            }
            Iterator<?> inner = children(current.next());
            if (inner != null) {
                if (open.size() == limit) {
                    return limit + 1;
                }
                open.push(inner);
                deepest = Math.max(deepest, open.size());
            }
        }
        return deepest;
    }

    /** Whether {@code value} nests deeper than {@code limit} levels. */
    static boolean exceeds(@Nullable Object value, int limit) {
        return of(value, limit) > limit;
    }

    /** The values inside a document or array the walk can see, or null for anything else. */
    private static @Nullable Iterator<?> children(@Nullable Object value) {
        if (value instanceof BsonDocument document) {
            return document.values().iterator();
        } else if (value instanceof BsonArray array) {
            return array.iterator();
        } else if (value instanceof Map<?, ?> map) {
            return map.values().iterator();
        } else if (value instanceof Iterable<?> iterable) {
            return iterable.iterator();
        }
        return null;
    }

    /**
     * An option document the driver writes one level inside its command ({@code let}, a {@code comment} document, and
     * findAndModify's {@code sort}, {@code fields} and {@code hint}), as BSON, refused as the driver refuses it when it
     * nests deeper than the 1,023 levels the driver writes there. Counted without recursion before anything recurses
     * into it; a value the walk cannot see into (a builder such as {@code Sorts.ascending}, a POJO inside a
     * {@code Document}) is encoded once, its encoding bounded by the same limit, and the encoding counted.
     *
     * @param option        the option's name as the command names it, for the message
     * @param value         the option as given: a {@link Bson} or a {@link BsonValue}
     * @param documentClass the collection's document class, to encode a {@link Bson} as the driver does
     * @param registry      the collection's codecs
     * @return the option as BSON: {@code value} itself when it is a {@link BsonValue}, else its encoding
     * @throws BsonSerializationException the driver's exception, naming the option, before anything is sent
     */
    public static BsonValue checkOption(String option, Object value, Class<?> documentClass, CodecRegistry registry) {
        @Nullable BsonValue encoded;
        try {
            encoded = encodedWithin(value, documentClass, registry);
        } catch (BsonSerializationException e) {
            if (!isDepthError(e)) {
                throw e;
            }
            encoded = null; // the encoding went past the writer's own limit
        }
        if (encoded == null) {
            throw tooDeepOption(option);
        }
        return encoded;
    }

    /** {@code value} as BSON, or null when it nests deeper than an option may. */
    private static @Nullable BsonValue encodedWithin(Object value, Class<?> documentClass, CodecRegistry registry) {
        if (exceeds(value, STATEMENT_PART)) {
            return null;
        }
        if (value instanceof BsonValue bson) {
            return bson;
        }
        BsonDocument encoded = ((Bson) value).toBsonDocument(documentClass, registry);
        // A Document comes back as a wrapper that encodes it when first read: the walk reads it.
        return encoded != value && exceeds(encoded, STATEMENT_PART) ? null : encoded;
    }

    private static BsonSerializationException tooDeepOption(String option) {
        return new BsonSerializationException(DRIVER_MESSAGE + " The " + option + " option nests deeper than the "
                + STATEMENT_PART + " levels the driver writes there; flatten it (a cycle nests without end). Nothing"
                + " was sent.");
    }

    /** Whether {@code e} is the driver's refusal of a value nested too deep. */
    static boolean isDepthError(RuntimeException e) {
        return e instanceof BsonSerializationException
                && e.getMessage() != null
                && e.getMessage().startsWith("Maximum serialization depth exceeded");
    }

    /**
     * The driver's exception for a value nested too deep, its message followed by which write and part it is. The type
     * is the driver's (not {@link InvalidBulkException}), so code that catches the driver's refusal catches the guard's.
     */
    static BsonSerializationException tooDeep(int index, String modelName, String part, int limit) {
        return new BsonSerializationException(DRIVER_MESSAGE + " Write at index " + index + " (" + modelName + "): the "
                + part + " nests deeper than the " + limit + " levels the driver writes there; flatten it (a cycle"
                + " nests without end). Nothing was sent.");
    }
}
