package io.github.mongowriteguard.testkit.engine;

import de.bwaldvogel.mongo.backend.memory.MemoryBackend;
import de.bwaldvogel.mongo.bson.Document;
import de.bwaldvogel.mongo.exception.MongoServerError;
import de.bwaldvogel.mongo.exception.MongoServerException;
import de.bwaldvogel.mongo.wire.bson.BsonDecoder;
import de.bwaldvogel.mongo.wire.bson.BsonEncoder;
import io.github.mongowriteguard.testkit.wire.Bson;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.netty.channel.embedded.EmbeddedChannel;
import java.util.concurrent.locks.ReentrantLock;
import org.bson.BsonDocument;
import org.bson.BsonDouble;
import org.bson.BsonInt32;
import org.bson.BsonString;

/**
 * The storage and query engine behind an emulated node: mongo-java-server's in-memory backend. Everything the
 * engine does not model (sessions, fail points, deadlines, replica-set identity) is added in front of it by the
 * node; this class only translates BSON between the driver's types and the engine's, and runs one command at a
 * time, like a single global write lock.
 */
public final class StorageEngine implements AutoCloseable {
    private final Backend backend = new Backend();

    /** The in-memory backend, with its database names readable. */
    private static final class Backend extends MemoryBackend {
        java.util.Set<String> databaseNames() {
            return listDatabaseNames();
        }
    }

    private final EmbeddedChannel channel = new EmbeddedChannel();
    private final ReentrantLock lock = new ReentrantLock();
    private final Validators validators = new Validators();
    /** Whether inserts are checked as mongod checks them (false for scratch engines that hold no user data). */
    private final boolean validating;
    /** Runs update pipelines on one document at a time ({@link ComputedUpdates}); guarded by {@link #lock}. */
    private StorageEngine computing;
    /** Capped collections and default collations, which the engine does not keep ({@link OptionedCollections}). */
    private final OptionedCollections optioned = new OptionedCollections(this, this::runOrdinary, this::runPlain);
    /** The server version whose rules version-dependent checks follow (the node's). */
    private volatile io.github.mongowriteguard.testkit.server.ServerVersion version =
            io.github.mongowriteguard.testkit.server.ServerVersion.V4_4;
    /** Whether this engine is a multi-document transaction's private copy of the data. */
    private volatile boolean transactionSnapshot;

    /** An engine that checks what mongod checks of documents to insert ({@link InsertValidation}, validators). */
    public StorageEngine() {
        this(true);
    }

    private StorageEngine(boolean validating) {
        this.validating = validating;
    }

    /**
     * An engine for the emulator's own bookkeeping (e.g. filtering {@code currentOp} entries), which stores what it is
     * given: no nesting limit, {@code $} fields or validators.
     *
     * @return a new engine
     */
    public static StorageEngine scratch() {
        return new StorageEngine(false);
    }

    /**
     * Runs a command that carries no session, deadline or routing fields (the node removed them). Engine errors
     * become the server's error reply ({@code ok: 0, code, codeName, errmsg}).
     *
     * @param database the database
     * @param given    the command
     * @return the reply
     */
    public BsonDocument run(String database, BsonDocument given) {
        // a getMore with no or a zero batch size asks for every document, as on the server (GetMoreBatchSize)
        BsonDocument command = GetMoreBatchSize.forEngine(given);
        if (!validating) {
            return runInEngine(database, command);
        }
        BsonDocument optionedReply = optioned.handle(database, command, version, transactionSnapshot);
        return optionedReply != null ? optionedReply : runOrdinary(database, command);
    }

    /**
     * Sets the server version whose rules the engine layer follows where they differ by version (capped collections).
     *
     * @param version the node's server version
     */
    public void serverVersion(io.github.mongowriteguard.testkit.server.ServerVersion version) {
        this.version = java.util.Objects.requireNonNull(version, "version");
    }

    /** A command past the collection options: the insert and update checks, validators, then the engine. */
    private BsonDocument runOrdinary(String database, BsonDocument command) {
        if (command.getFirstKey().equals("insert")) {
            return InsertValidation.run(
                    command,
                    document -> validators.refusal(database, command, document),
                    checked -> runInEngine(database, checked));
        }
        String name = command.getFirstKey();
        if ((name.equals("update") || name.equalsIgnoreCase("findAndModify"))
                && command.get(name).isString()) {
            String collection = command.getString(name).getValue();
            // the documents the update writes, checked as mongod checks them for storage (UpdateStorageValidation)
            return atomically(() -> UpdateStorageValidation.run(
                    command,
                    filter -> !matchingIds(database, collection, filter).isEmpty(),
                    checked -> runUpdate(database, checked)));
        }
        return runUpdate(database, command);
    }

    /**
     * Gives {@code copy}, a transaction's private copy of the data, this engine's collection validators, collection
     * options (capped, default collation) and server version, so that it checks what its collections check (mongod
     * validates a transaction's writes as any other: the validator belongs to the collection,
     * {@code src/mongo/db/catalog/collection_impl.cpp}). Call it after the copy holds the documents: they are not
     * checked again.
     *
     * @param copy the engine that gets them
     */
    public void copyValidatorsTo(StorageEngine copy) {
        validators.copyTo(copy.validators);
        optioned.copyTo(copy.optioned);
        copy.version = version;
        copy.transactionSnapshot = true;
    }

    /** An update or any other command past the storage checks: the collection's validators, then the engine. */
    private BsonDocument runUpdate(String database, BsonDocument command) {
        String name = command.getFirstKey();
        if (name.equals("update") || name.equalsIgnoreCase("findAndModify")) {
            BsonDocument validated = atomically(() -> updateValidated(database, command));
            if (validated != null) {
                return validated;
            }
        }
        BsonDocument handled = validators.handle(database, command, plain -> runInEngine(database, plain));
        return handled != null ? handled : runInEngine(database, command);
    }

    /** An update checked by the collection's validator ({@link UpdateValidation}), or null when none checks it. */
    private BsonDocument updateValidated(String database, BsonDocument command) {
        if (!command.get(command.getFirstKey()).isString()) {
            return null;
        }
        String collection = command.getString(command.getFirstKey()).getValue();
        UpdateValidation validation = validators.forUpdate(
                database, command, () -> documents(database, collection), plain -> runInEngine(database, plain));
        if (validation == null) {
            return null;
        }
        if (command.getFirstKey().equals("update")) {
            return validation.update(command);
        }
        return command.getBoolean("remove", org.bson.BsonBoolean.FALSE).getValue()
                ? null
                : validation.findAndModify(command);
    }

    private BsonDocument runInEngine(String database, BsonDocument command) {
        if (FindProjections.needed(command)) {
            // expressions in a find projection, which the engine's find does not evaluate (FindProjections)
            return FindProjections.run(command, aggregate -> runInEngine(database, aggregate));
        }
        if (RegexExpressions.needed(command)) {
            // $regexFind, $regexFindAll, $regexMatch, which the engine's aggregation lacks (RegexExpressions)
            return atomically(
                    () -> RegexExpressions.run(database, command, plain -> runPlain(database, plain), computing()));
        }
        if (ComputedUpdates.needed(command)) {
            // $bit and pipeline updates, which the engine cannot apply: computed per document (ComputedUpdates)
            return atomically(
                    () -> ComputedUpdates.run(database, command, plain -> runPlain(database, plain), computing()));
        }
        return runPlain(database, command);
    }

    /** The scratch engine that runs an update pipeline on one document, made on first use. */
    private StorageEngine computing() {
        if (computing == null) {
            computing = scratch();
        }
        return computing;
    }

    private BsonDocument runPlain(String database, BsonDocument command) {
        String name = command.getFirstKey();
        Document engineCommand = toEngine(command);
        lock.lock();
        try {
            return fromEngine(backend.handleCommand(channel, database, name, engineCommand));
        } catch (MongoServerError e) {
            return error(e.getCode(), e.getCodeName(), e.getMessageWithoutErrorCode());
        } catch (MongoServerException e) {
            return error(8, "UnknownError", e.getMessageWithoutErrorCode());
        } finally {
            lock.unlock();
        }
    }

    /**
     * Runs {@code work} while no command runs on this engine (the engine's lock is reentrant, so {@code work} may run
     * commands): several commands applied as one step.
     *
     * @param work what to run
     * @param <T>  its result
     * @return its result
     */
    public <T> T atomically(java.util.function.Supplier<T> work) {
        lock.lock();
        try {
            return work.get();
        } finally {
            lock.unlock();
        }
    }

    /**
     * The documents of every collection, by namespace ({@code db.collection}) and {@code _id}, as one consistent
     * picture.
     *
     * @return the documents
     */
    public java.util.Map<String, java.util.Map<org.bson.BsonValue, BsonDocument>> documents() {
        return atomically(() -> {
            java.util.Map<String, java.util.Map<org.bson.BsonValue, BsonDocument>> all =
                    new java.util.LinkedHashMap<>();
            for (String database : new java.util.TreeSet<>(backend.databaseNames())) {
                for (String collection : collections(database)) {
                    all.put(database + "." + collection, documents(database, collection));
                }
            }
            return all;
        });
    }

    /**
     * The documents of one collection by {@code _id} (empty when it does not exist).
     *
     * @param database   the database
     * @param collection the collection
     * @return the documents
     */
    public java.util.Map<org.bson.BsonValue, BsonDocument> documents(String database, String collection) {
        return atomically(() -> {
            java.util.Map<org.bson.BsonValue, BsonDocument> documents = new java.util.LinkedHashMap<>();
            if (!backend.databaseNames().contains(database)) {
                return documents;
            }
            de.bwaldvogel.mongo.MongoCollection<?> engineCollection =
                    backend.resolveDatabase(database).resolveCollection(collection, false);
            if (engineCollection != null) {
                engineCollection
                        .queryAllAsStream()
                        .map(StorageEngine::fromEngine)
                        .forEach(document -> documents.put(document.get("_id"), document));
            }
            return documents;
        });
    }

    /**
     * The {@code _id}s of the documents of one collection that {@code filter} matches, as the engine's query language
     * matches them.
     *
     * @param database   the database
     * @param collection the collection
     * @param filter     the filter
     * @return the matching documents' {@code _id}s
     */
    public java.util.List<org.bson.BsonValue> matchingIds(String database, String collection, BsonDocument filter) {
        return atomically(() -> {
            if (!backend.databaseNames().contains(database)) {
                return java.util.List.of();
            }
            de.bwaldvogel.mongo.MongoCollection<?> engineCollection =
                    backend.resolveDatabase(database).resolveCollection(collection, false);
            if (engineCollection == null) {
                return java.util.List.of();
            }
            return engineCollection
                    .handleQueryAsStream(toEngine(filter))
                    .map(StorageEngine::fromEngine)
                    .map(document -> document.get("_id"))
                    .toList();
        });
    }

    /**
     * The documents of {@code documents} that {@code filter} matches, as the engine's query language matches them
     * (in a scratch engine), in their order.
     *
     * @param documents the documents
     * @param filter    the filter
     * @return the matching documents
     */
    java.util.List<BsonDocument> matching(java.util.List<BsonDocument> documents, BsonDocument filter) {
        return atomically(() -> {
            StorageEngine scratch = computing();
            scratch.run("matching", new BsonDocument("drop", new BsonString("documents")));
            org.bson.BsonArray numbered = new org.bson.BsonArray();
            for (int i = 0; i < documents.size(); i++) {
                BsonDocument document = new BsonDocument("_id", new BsonInt32(i));
                documents.get(i).forEach(document::append);
                numbered.add(document);
            }
            if (!numbered.isEmpty()) {
                scratch.run(
                        "matching",
                        new BsonDocument("insert", new BsonString("documents")).append("documents", numbered));
            }
            java.util.List<BsonDocument> matched = new java.util.ArrayList<>();
            for (org.bson.BsonValue id : scratch.matchingIds("matching", "documents", filter)) {
                matched.add(documents.get(id.asInt32().getValue()));
            }
            matched.sort(java.util.Comparator.comparingInt(documents::indexOf));
            return matched;
        });
    }

    private java.util.List<String> collections(String database) {
        BsonDocument reply = run(database, new BsonDocument("listCollections", new BsonInt32(1)));
        java.util.List<String> names = new java.util.ArrayList<>();
        if (reply.containsKey("cursor")) {
            for (org.bson.BsonValue entry : reply.getDocument("cursor").getArray("firstBatch")) {
                String name = entry.asDocument().getString("name").getValue();
                if (!name.startsWith("system.")) {
                    names.add(name);
                }
            }
        }
        return names;
    }

    /**
     * A server error reply.
     *
     * @param code     the error code
     * @param codeName the code name, or null for {@code UnknownError}
     * @param message  the message, or null for the code name
     * @return {@code {ok: 0, errmsg, code, codeName}}
     */
    public static BsonDocument error(int code, String codeName, String message) {
        return new BsonDocument("ok", new BsonDouble(0))
                .append("errmsg", new BsonString(message == null ? codeName : message))
                .append("code", new BsonInt32(code))
                .append("codeName", new BsonString(codeName == null ? "UnknownError" : codeName));
    }

    private static Document toEngine(BsonDocument document) {
        ByteBuf buffer = Unpooled.wrappedBuffer(Bson.encode(document));
        try {
            return BsonDecoder.decodeBson(buffer);
        } finally {
            buffer.release();
        }
    }

    private static BsonDocument fromEngine(Document document) {
        ByteBuf buffer = Unpooled.buffer();
        try {
            BsonEncoder.encodeDocument(document, buffer);
            byte[] bytes = new byte[buffer.readableBytes()];
            buffer.readBytes(bytes);
            return Bson.decode(bytes);
        } finally {
            buffer.release();
        }
    }

    @Override
    public void close() {
        if (computing != null) {
            computing.close();
        }
        backend.close();
        channel.close();
    }
}
