package io.github.mongowriteguard.internal.plan;

import com.mongodb.client.MongoCollection;
import com.mongodb.client.model.WriteModel;
import io.github.mongowriteguard.exception.InvalidBulkException;
import io.github.mongowriteguard.exception.InvalidBulkException.Problem;
import java.util.List;
import java.util.Objects;
import org.bson.BsonBinaryWriter;
import org.bson.BsonDocument;
import org.bson.BsonValue;
import org.bson.codecs.BsonDocumentCodec;
import org.bson.codecs.Codec;
import org.bson.codecs.EncoderContext;
import org.bson.codecs.configuration.CodecRegistry;
import org.bson.io.BasicOutputBuffer;

/**
 * Plans a bulk write: the entry point of the {@code bulk} package.
 *
 * <p>A driver ORDERED bulk on a hashed shard key costs about one mongos-to-shard round trip per change of target
 * shard (~800 for 1,000 documents on 5 shards); an UNORDERED bulk costs one. The planner keeps the result the caller
 * asked for while using as few UNORDERED rounds as possible: writes on the same {@code _id} keep their order (round k
 * holds the k-th run of writes of every {@code _id}, a run travelling in one command), and writes on different
 * {@code _id}s share a round. The semantics are spelled out in the
 * {@linkplain io.github.mongowriteguard.bulk package documentation}.
 *
 * <pre>{@code
 * BulkPlanner<Document> planner = BulkPlanner.forCollection(collection);
 * PlannedBulk plan = planner.plan(models, PlanOptions.from(bulkWriteOptions, settings.isStrictOrdered()));
 * for (Round round : plan.rounds()) {
 *     // one bulkWrite per round, ordered(round.isOrdered())
 * }
 * }</pre>
 *
 * <p>Immutable and thread-safe. Planning is linear in the number of writes: an insert or replacement that is a plain
 * {@code Document} is measured by arithmetic, any other document is encoded once to measure it, and every filter is
 * read once (the plan keeps it, and it is what the guard sends).
 *
 * @param <T> the collection's document class
 */
public final class BulkPlanner<T> {

    /** The server's limit for one document, 16 MiB (maxBsonObjectSize). */
    public static final int MAX_DOCUMENT_SIZE_BYTES = WriteInspector.MAX_DOCUMENT_SIZE_BYTES;

    private final Class<T> documentClass;
    private final CodecRegistry codecRegistry;
    private final Codec<T> codec;
    private final IdAssigner<T> idAssigner;
    private final DocumentShortcuts shortcuts;

    private BulkPlanner(Class<T> documentClass, CodecRegistry codecRegistry, IdAssigner<T> idAssigner) {
        this.documentClass = Objects.requireNonNull(documentClass, "documentClass");
        this.codecRegistry = Objects.requireNonNull(codecRegistry, "codecRegistry");
        this.idAssigner = Objects.requireNonNull(idAssigner, "idAssigner");
        this.codec = codecRegistry.get(documentClass);
        this.shortcuts = new DocumentShortcuts(codecRegistry);
    }

    /**
     * A planner for {@code collection}'s document class and codecs; ids assigned by the collection's codec.
     *
     * @param <T>        the collection's document class
     * @param collection the collection the bulk is for; only its document class and codec registry are read
     * @return the planner
     * @throws NullPointerException if {@code collection} is null
     */
    public static <T> BulkPlanner<T> forCollection(MongoCollection<T> collection) {
        Objects.requireNonNull(collection, "collection");
        return of(collection.getDocumentClass(), collection.getCodecRegistry());
    }

    /**
     * A planner for documents of {@code documentClass}, encoded with {@code codecRegistry}; ids assigned by that
     * class's codec ({@link IdAssigner#fromCodec}).
     *
     * @param <T>           the document class
     * @param documentClass the class of the bulk's documents
     * @param codecRegistry the registry that encodes them (the collection's)
     * @return the planner
     * @throws org.bson.codecs.configuration.CodecConfigurationException if the registry has no codec for the class
     */
    public static <T> BulkPlanner<T> of(Class<T> documentClass, CodecRegistry codecRegistry) {
        return new BulkPlanner<>(documentClass, codecRegistry, IdAssigner.fromCodec(documentClass, codecRegistry));
    }

    /**
     * As {@link #of(Class, CodecRegistry)}, with ids assigned by {@code idAssigner}.
     *
     * @param <T>           the document class
     * @param documentClass the class of the bulk's documents
     * @param codecRegistry the registry that encodes them (the collection's)
     * @param idAssigner    what puts an {@code _id} into an inserted document that has none
     * @return the planner
     * @throws org.bson.codecs.configuration.CodecConfigurationException if the registry has no codec for the class
     * @throws NullPointerException if an argument is null
     */
    static <T> BulkPlanner<T> of(Class<T> documentClass, CodecRegistry codecRegistry, IdAssigner<T> idAssigner) {
        return new BulkPlanner<>(documentClass, codecRegistry, idAssigner);
    }

    /**
     * Checks the bulk, assigns missing {@code _id}s, and plans it.
     *
     * <p>Every check that does not depend on assigned ids runs before any id is assigned, so a rejected bulk leaves
     * the caller's documents as they were. One check needs the assigned ids and runs after them: a document that its new
     * {@code _id} pushes over 16 MiB. Either way nothing is sent.
     *
     * @param models  the caller's bulk, as for {@link MongoCollection#bulkWrite(List, com.mongodb.client.model.BulkWriteOptions)};
     *                an empty list gives an empty plan
     * @param options what the caller asked: ordered or not, strict or not
     * @return the plan, immutable
     * @throws InvalidBulkException if the list or an element is null, an update has no update operators or an empty
     *                              pipeline, a replacement has update operators, or a document is over 16 MiB; the
     *                              message names the index
     */
    public PlannedBulk plan(List<? extends WriteModel<? extends T>> models, PlanOptions options) {
        if (models == null) {
            throw new InvalidBulkException(
                    -1,
                    Problem.NULL_MODELS,
                    "Invalid bulk write: the list of write models is null; pass an empty list for an empty bulk."
                            + " Nothing was sent.");
        }
        Objects.requireNonNull(options, "options");

        // 1. Read and check every write. Nothing is changed yet.
        WriteFacts[] facts = new WriteInspector<>(
                        documentClass, codecRegistry, codec, shortcuts, options.singleDocumentById())
                .inspectAll(models);

        // 2. Give inserts without _id an _id: the only change made to the caller's objects.
        assignMissingIds(facts);
        KeyTable keys = new KeyTable(facts.length);
        keys.numberKeys(facts);

        // 3. Rounds and the reasons.
        return RoundBuilder.build(facts, keys.count(), options);
    }

    @SuppressWarnings("unchecked")
    private void assignMissingIds(WriteFacts[] facts) {
        for (WriteFacts write : facts) {
            if (!write.needsId) {
                continue;
            }
            T document = (T) write.document();
            BsonValue id = idAssigner.assignId(document);
            if (id == null) {
                id = idAssigner.idToAppend(document);
                if (id == null) {
                    write.freshKey = true; // generated at send time: no other write can name it
                    continue;
                }
                write.appendedId = true;
            }
            write.keyBy(Ids.copy(id));
            long sizeWithId = (long) write.documentSize + idElementSize(id);
            if (sizeWithId > MAX_DOCUMENT_SIZE_BYTES) {
                throw WriteInspector.invalid(
                        write.index,
                        write.kind.modelName(),
                        Problem.DOCUMENT_TOO_LARGE,
                        "with its assigned _id, " + WriteInspector.tooLarge(sizeWithId));
            }
        }
    }

    /** Bytes that the element {@code _id: id} adds to a document. */
    private static int idElementSize(BsonValue id) {
        if (id.isObjectId()) {
            return 1 + 4 + 12; // type byte, "_id\0", 12 bytes
        }
        BasicOutputBuffer buffer = new BasicOutputBuffer(64);
        try (BsonBinaryWriter writer = new BsonBinaryWriter(buffer)) {
            new BsonDocumentCodec()
                    .encode(
                            writer,
                            new BsonDocument("_id", id),
                            EncoderContext.builder().build());
        }
        return buffer.getPosition() - 5; // minus the document's length prefix and terminating byte
    }

    @Override
    public String toString() {
        return "BulkPlanner{documentClass=" + documentClass.getName() + '}';
    }
}
