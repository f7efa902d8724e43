package io.github.mongowriteguard.internal.execution;

import com.mongodb.MongoNamespace;
import com.mongodb.WriteConcern;
import com.mongodb.client.MongoCollection;
import com.mongodb.client.MongoDatabase;
import io.github.mongowriteguard.internal.ClientPort;
import io.github.mongowriteguard.internal.catalog.CatalogSource;
import org.bson.codecs.configuration.CodecRegistry;
import org.jspecify.annotations.Nullable;

/**
 * How one collection's write commands reach the server: the only part of a guarded write that differs between the
 * synchronous and the reactive driver. Everything above it (planner, encoder, send loop, outcome rules, copy ledger,
 * settle) is one implementation.
 *
 * @param channel  the wire under the sender: one command, one answer
 * @param gate     the overlap gate, asking the server through this transport
 * @param sessions where the guard's own sessions come from
 * @param catalog  where the catalog is read (the placement of keys, a collection's options)
 * @param resume   where a call continues after an answer or a backoff that held no thread (the reactive guard's
 *                 scheduler), or null when answers come on the calling thread (the synchronous driver)
 */
record Transport(
        CommandChannel channel,
        CopySender.Gate gate,
        Sessions.Source sessions,
        CatalogSource catalog,
        @Nullable Resume resume) {

    /** The synchronous driver's: commands through the collection's database with its codecs. */
    static Transport sync(ClientPort access, MongoCollection<?> collection, GuardRuntime runtime) {
        MongoDatabase database = access.getDatabase(collection.getNamespace().getDatabaseName())
                .withCodecRegistry(collection.getCodecRegistry());
        MongoDatabase admin = access.getDatabase("admin");
        return new Transport(
                CommandChannel.of(database, runtime.servers()),
                (copy, lastSendNanos, maxTimeMs) -> runtime.gate().beforeRetry(admin, copy, lastSendNanos, maxTimeMs),
                access::startSession,
                CatalogSource.of(access),
                null);
    }

    /**
     * What the executors read of a collection: its namespace, document class, codecs and write concern (the driver's
     * synchronous and reactive collections both have them).
     */
    record Target<T>(
            MongoNamespace namespace, Class<T> documentClass, CodecRegistry registry, WriteConcern writeConcern) {
        static <T> Target<T> of(MongoCollection<T> collection) {
            return new Target<>(
                    collection.getNamespace(),
                    collection.getDocumentClass(),
                    collection.getCodecRegistry(),
                    collection.getWriteConcern());
        }
    }
}
