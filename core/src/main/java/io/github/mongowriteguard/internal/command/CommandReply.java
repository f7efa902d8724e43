package io.github.mongowriteguard.internal.command;

import com.mongodb.bulk.WriteConcernError;
import java.util.HashMap;
import java.util.Map;
import org.bson.BsonBinaryReader;
import org.bson.BsonDocument;
import org.bson.BsonInt32;
import org.bson.BsonString;
import org.bson.BsonType;
import org.bson.BsonValue;
import org.bson.RawBsonDocument;
import org.bson.codecs.BsonDocumentCodec;
import org.bson.codecs.BsonValueCodec;
import org.bson.codecs.DecoderContext;
import org.jspecify.annotations.Nullable;

/**
 * The reply to one {@link WriteCommand}: counts, upserted ids and write errors by statement position, and the
 * write-concern error, read as mongod and mongos write them.
 */
public final class CommandReply {
    private static final BsonValueCodec VALUE_CODEC = new BsonValueCodec();
    private static final int[] NO_POSITIONS = {};
    private static final BsonValue[] NO_IDS = {};
    private static final DecoderContext DECODER_CONTEXT =
            DecoderContext.builder().build();

    private final RawBsonDocument document;
    private final int n;
    private final int nModified;
    // Made at their first entry: most replies have no write error and no label, many no upsert.
    // Each upserted {index, _id}, by ascending index once read (binary search): no map and no boxed key per upsert.
    private int[] upsertedPositions = NO_POSITIONS;
    private BsonValue[] upsertedIds = NO_IDS;
    private int upsertedCount;
    private Map<Integer, StatementError> errors = Map.of();
    private final @Nullable BsonDocument writeConcernError;
    private java.util.Set<String> errorLabels = java.util.Set.of();

    /** A write error of one statement. */
    public record StatementError(int code, String codeName, String message, BsonDocument details) {}

    private CommandReply(RawBsonDocument reply) {
        this.document = reply;
        // One pass over the reply's bytes: the counts, each upserted {index, _id}; errors are decoded whole.
        int n = 0;
        int nModified = 0;
        BsonDocument writeConcernError = null;
        try (BsonBinaryReader reader =
                new BsonBinaryReader(reply.getByteBuffer().asNIO())) {
            reader.readStartDocument();
            while (reader.readBsonType() != BsonType.END_OF_DOCUMENT) {
                switch (reader.readName()) {
                    case "n":
                        n = readInt(reader);
                        break;
                    case "nModified":
                        nModified = readInt(reader);
                        break;
                    case "upserted":
                        readUpserted(reader);
                        break;
                    case "writeErrors":
                        for (BsonValue value : readValue(reader).asArray()) {
                            BsonDocument error = value.asDocument();
                            if (errors.isEmpty()) {
                                errors = new HashMap<>();
                            }
                            errors.put(
                                    error.getNumber("index").intValue(),
                                    new StatementError(
                                            error.get("code", new BsonInt32(8))
                                                    .asNumber()
                                                    .intValue(),
                                            error.getString("codeName", new BsonString(""))
                                                    .getValue(),
                                            error.getString("errmsg", new BsonString(""))
                                                    .getValue(),
                                            error.getDocument("errInfo", new BsonDocument())));
                        }
                        break;
                    case "writeConcernError":
                        writeConcernError = readValue(reader).asDocument();
                        break;
                    case "errorLabels":
                        for (BsonValue label : readValue(reader).asArray()) {
                            if (errorLabels.isEmpty()) {
                                errorLabels = new java.util.HashSet<>();
                            }
                            errorLabels.add(label.asString().getValue());
                        }
                        break;
                    default:
                        reader.skipValue();
                }
            }
        }
        this.n = n;
        this.nModified = nModified;
        this.writeConcernError = writeConcernError;
    }

    private void readUpserted(BsonBinaryReader reader) {
        reader.readStartArray();
        while (reader.readBsonType() != BsonType.END_OF_DOCUMENT) {
            reader.readStartDocument();
            int index = -1;
            BsonValue id = null;
            while (reader.readBsonType() != BsonType.END_OF_DOCUMENT) {
                String field = reader.readName();
                if ("index".equals(field)) {
                    index = readInt(reader);
                } else if ("_id".equals(field)) {
                    id = readValue(reader);
                } else {
                    reader.skipValue();
                }
            }
            reader.readEndDocument();
            addUpserted(index, id);
        }
        reader.readEndArray();
        sortUpsertedIfNeeded();
    }

    private void addUpserted(int index, BsonValue id) {
        if (upsertedCount == upsertedPositions.length) {
            int capacity = Math.max(1, upsertedCount * 2);
            upsertedPositions = java.util.Arrays.copyOf(upsertedPositions, capacity);
            upsertedIds = java.util.Arrays.copyOf(upsertedIds, capacity);
        }
        upsertedPositions[upsertedCount] = index;
        upsertedIds[upsertedCount] = id;
        upsertedCount++;
    }

    /**
     * mongod lists upserts in statement order; a reply that does not (one merged from several shards) is put in that
     * order here, so that {@link #upsertedId} can search it. An index listed twice keeps its last {@code _id}, as a map
     * would.
     */
    private void sortUpsertedIfNeeded() {
        for (int i = 1; i < upsertedCount; i++) {
            if (upsertedPositions[i - 1] >= upsertedPositions[i]) {
                java.util.TreeMap<Integer, BsonValue> byIndex = new java.util.TreeMap<>();
                for (int j = 0; j < upsertedCount; j++) {
                    byIndex.put(upsertedPositions[j], upsertedIds[j]);
                }
                upsertedCount = 0;
                byIndex.forEach(this::addUpserted);
                return;
            }
        }
    }

    private static int readInt(BsonBinaryReader reader) {
        // int32 from mongod; int64 or double from some mongos versions. Read straight from the reader: these are read
        // for every reply (n, nModified, each upserted index), where the value codec would look its codec up each time.
        switch (reader.getCurrentBsonType()) {
            case INT32:
                return reader.readInt32();
            case INT64:
                return (int) reader.readInt64();
            case DOUBLE:
                return (int) reader.readDouble();
            default:
                return readValue(reader).asNumber().intValue();
        }
    }

    private static BsonValue readValue(BsonBinaryReader reader) {
        return VALUE_CODEC.decode(reader, DECODER_CONTEXT);
    }

    /** Reads {@code reply}; a {@link RawBsonDocument} is read from its bytes without decoding it first. */
    public static CommandReply of(BsonDocument reply) {
        return new CommandReply(
                reply instanceof RawBsonDocument
                        ? (RawBsonDocument) reply
                        : new RawBsonDocument(reply, new BsonDocumentCodec()));
    }

    /** The whole reply, for commands whose reply has more (e.g. {@code findAndModify}'s {@code value}). */
    public RawBsonDocument document() {
        return document;
    }

    /** Documents inserted, matched (updates, upserts included) or deleted, as the server counts {@code n}. */
    public int n() {
        return n;
    }

    public int nModified() {
        return nModified;
    }

    /** The {@code _id} of the document the statement at {@code position} upserted, or null. */
    public @Nullable BsonValue upsertedId(int position) {
        int at = java.util.Arrays.binarySearch(upsertedPositions, 0, upsertedCount, position);
        return at < 0 ? null : upsertedIds[at];
    }

    public int upsertedCount() {
        return upsertedCount;
    }

    /** The write error of the statement at {@code position}, or null. */
    public @Nullable StatementError error(int position) {
        return errors.isEmpty() ? null : errors.get(position);
    }

    public int errorCount() {
        return errors.size();
    }

    /**
     * Whether some statement's write error has a code {@code code} accepts; false at once for a reply without write
     * errors, the common one, without walking anything.
     */
    public boolean anyErrorCode(java.util.function.IntPredicate code) {
        if (errors.isEmpty()) {
            return false;
        }
        for (StatementError error : errors.values()) {
            if (code.test(error.code())) {
                return true;
            }
        }
        return false;
    }

    /** The lowest statement position with a write error, or -1. */
    public int firstErrorPosition() {
        if (errors.isEmpty()) {
            return -1; // most replies: no stream to build
        }
        return errors.keySet().stream().mapToInt(Integer::intValue).min().orElse(-1);
    }

    /** The reply's top-level error labels (e.g. {@code RetryableWriteError} on a write-concern error). */
    public java.util.Set<String> errorLabels() {
        return errorLabels.isEmpty() ? java.util.Set.of() : java.util.Collections.unmodifiableSet(errorLabels);
    }

    /** A reply's {@code writeConcernError} document as the driver's {@link WriteConcernError}. */
    public static WriteConcernError toWriteConcernError(BsonDocument error) {
        return new WriteConcernError(
                error.get("code", new BsonInt32(64)).asNumber().intValue(),
                error.getString("codeName", new BsonString("")).getValue(),
                error.getString("errmsg", new BsonString("")).getValue(),
                error.getDocument("errInfo", new BsonDocument()));
    }

    /** The write-concern error, or null. */
    public @Nullable BsonDocument writeConcernError() {
        return writeConcernError;
    }
}
