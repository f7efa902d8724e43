package io.github.mongowriteguard.internal.execution;

import com.mongodb.MongoNamespace;
import com.mongodb.ReadConcern;
import com.mongodb.ReadPreference;
import com.mongodb.WriteConcern;
import com.mongodb.client.MongoCollection;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.Supplier;
import org.bson.codecs.configuration.CodecRegistry;

/**
 * Executors by collection identity, so that wrapping the same collection again costs no planner or encoder. Bounded:
 * past {@value #MAX_CACHED_EXECUTORS} collections it starts again. Not API.
 */
public final class ExecutorCache {
    /** The most collections whose executors are kept. */
    public static final int MAX_CACHED_EXECUTORS = 1024;

    private final Map<ExecutorKey, Executors<?>> executors = new ConcurrentHashMap<>();

    /**
     * The executors of {@code collection} for {@code owner} (the client, or the access that does not name one) and
     * {@code deadlineMs}, made by {@code create} the first time.
     */
    public <T> Executors<T> get(
            Object owner, MongoCollection<T> collection, long deadlineMs, Supplier<Executors<T>> create) {
        ExecutorKey key = new ExecutorKey(owner, collection, deadlineMs);
        if (executors.size() >= MAX_CACHED_EXECUTORS && !executors.containsKey(key)) {
            executors.clear(); // many namespaces or short-lived accesses: start again rather than grow without bound
        }
        @SuppressWarnings("unchecked") // the key holds the document class
        Executors<T> cached = (Executors<T>) executors.computeIfAbsent(key, k -> create.get());
        return cached;
    }

    /** How many collections' executors are kept now. */
    public int size() {
        return executors.size();
    }

    /**
     * The planner- and encoder-holding executors of one guarded collection.
     *
     * @param bulk          the bulk executor
     * @param findAndModify the findAndModify executor
     * @param <T>           the collection's document class
     */
    public record Executors<T>(BulkExecutor<T> bulk, FindAndModifyExecutor<T> findAndModify) {}

    /**
     * Which collections may share executors: same client (or access), namespace, document class, codec registry (by
     * identity) and read/write concerns and read preference, as a new {@code getCollection} of the same name returns.
     */
    private static final class ExecutorKey {
        private final Object owner;
        private final MongoNamespace namespace;
        private final Class<?> documentClass;
        private final CodecRegistry codecRegistry;
        private final WriteConcern writeConcern;
        private final ReadConcern readConcern;
        private final ReadPreference readPreference;
        private final long deadlineMs;

        ExecutorKey(Object owner, MongoCollection<?> collection, long deadlineMs) {
            this.owner = owner;
            this.namespace = collection.getNamespace();
            this.documentClass = collection.getDocumentClass();
            this.codecRegistry = collection.getCodecRegistry();
            this.writeConcern = collection.getWriteConcern();
            this.readConcern = collection.getReadConcern();
            this.readPreference = collection.getReadPreference();
            this.deadlineMs = deadlineMs;
        }

        @Override
        public boolean equals(Object o) {
            return o instanceof ExecutorKey other
                    && owner == other.owner
                    && codecRegistry == other.codecRegistry
                    && documentClass == other.documentClass
                    && deadlineMs == other.deadlineMs
                    && namespace.equals(other.namespace)
                    && writeConcern.equals(other.writeConcern)
                    && readConcern.equals(other.readConcern)
                    && readPreference.equals(other.readPreference);
        }

        @Override
        public int hashCode() {
            return Objects.hash(
                    System.identityHashCode(owner),
                    namespace,
                    documentClass,
                    System.identityHashCode(codecRegistry),
                    writeConcern,
                    readConcern,
                    readPreference);
        }
    }
}
