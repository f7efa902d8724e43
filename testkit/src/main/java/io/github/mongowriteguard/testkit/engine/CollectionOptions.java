package io.github.mongowriteguard.testkit.engine;

import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import org.bson.BsonBoolean;
import org.bson.BsonDocument;
import org.bson.BsonInt32;
import org.bson.BsonInt64;
import org.bson.BsonString;
import org.bson.BsonValue;

/**
 * The collection options mongo-java-server's engine does not keep, kept here per namespace as mongod's catalog keeps
 * them ({@code src/mongo/db/catalog/collection_options.cpp}): {@code capped} with {@code size} (rounded up to a
 * multiple of 256, {@code adjustCappedSize}) and {@code max} ({@code adjustCappedMaxDocs}: 0 or less becomes
 * 2^31 - 1), and the collection's default {@code collation} as its full specification ({@link Collation}). They are
 * reported by {@code listCollections} in {@code options} ({@code CollectionOptions::appendBSON}: {@code capped},
 * {@code size}, {@code max}, then {@code collation}) and {@code collStats}, and applied by {@link CappedCollections}
 * and {@link Collation}.
 */
final class CollectionOptions {
    /** A capped collection's limits: {@code size} in bytes and {@code max} documents (0: none given). */
    record Capped(long size, long max) {
        /** {@return the most documents the collection keeps} */
        long maxDocuments() {
            return max == 0 ? Long.MAX_VALUE : max;
        }
    }

    /** One collection's options: either may be null. */
    record Options(Capped capped, Collation collation) {}

    private final Map<String, Options> byNamespace = new ConcurrentHashMap<>();

    /** {@return the options of {@code namespace}, or null when it has none of these} */
    Options of(String namespace) {
        return byNamespace.get(namespace);
    }

    /** {@return whether {@code namespace} is a capped collection} */
    boolean capped(String namespace) {
        Options options = byNamespace.get(namespace);
        return options != null && options.capped() != null;
    }

    /** {@return the default collation of {@code namespace}, or null for the simple (binary) one} */
    Collation collation(String namespace) {
        Options options = byNamespace.get(namespace);
        return options == null ? null : options.collation();
    }

    /**
     * The options a {@code create} command asks for, checked as {@code src/mongo/db/commands/create.cpp} and
     * {@code collection_options.cpp} check them.
     *
     * @param command the {@code create} command
     * @return the options, or null when it asks for none of these
     * @throws EngineRefusal when the server (or the emulator) refuses them
     */
    static Options parse(BsonDocument command) {
        boolean capped = truthy(command.get("capped"));
        BsonValue size = command.get("size");
        BsonValue max = command.get("max");
        Capped cappedOptions = null;
        if (capped) {
            if (size == null || !size.isNumber()) {
                // src/mongo/db/commands/create.cpp
                throw new EngineRefusal(72, "InvalidOptions", "the 'size' field is required when 'capped' is true");
            }
            long bytes = size.asNumber().longValue();
            if (bytes < 0) {
                throw new EngineRefusal(2, "BadValue", "size has to be >= 0");
            }
            long maxDocuments = 0;
            if (max != null && max.isNumber()) {
                maxDocuments = max.asNumber().longValue();
                if (maxDocuments >= 1L << 31) {
                    throw new EngineRefusal(2, "BadValue", "max in a capped collection has to be < 2^31 or not set");
                }
                if (maxDocuments <= 0) {
                    maxDocuments = 0x7fffffff;
                }
            }
            cappedOptions = new Capped((bytes + 0xff) & 0xffffffffffffff00L, maxDocuments);
        }
        Collation collation = null;
        if (command.containsKey("collation")) {
            collation = Collation.parse(command.get("collation"));
        }
        return cappedOptions == null && collation == null ? null : new Options(cappedOptions, collation);
    }

    /** The command without the options kept here, for the engine (which refuses {@code capped}). */
    static BsonDocument plain(BsonDocument command) {
        BsonDocument plain = command.clone();
        plain.remove("capped");
        plain.remove("size");
        plain.remove("max");
        plain.remove("collation");
        return plain;
    }

    void remember(String namespace, Options options) {
        if (options != null) {
            byNamespace.put(namespace, options);
        }
    }

    void forget(String namespace) {
        byNamespace.remove(namespace);
    }

    void forgetDatabase(String database) {
        byNamespace.keySet().removeIf(namespace -> namespace.startsWith(database + "."));
    }

    void copyTo(CollectionOptions other) {
        other.byNamespace.putAll(byNamespace);
    }

    /** Adds each collection's options to a {@code listCollections} reply, in {@code appendBSON}'s order. */
    void report(String database, BsonDocument reply) {
        if (!reply.containsKey("cursor")) {
            return;
        }
        for (BsonValue entry : reply.getDocument("cursor").getArray("firstBatch")) {
            BsonDocument collection = entry.asDocument();
            Options options = byNamespace.get(
                    database + "." + collection.getString("name").getValue());
            if (options == null) {
                continue;
            }
            BsonDocument reported = new BsonDocument();
            if (options.capped() != null) {
                reported.append("capped", BsonBoolean.TRUE)
                        .append("size", number(options.capped().size()));
                if (options.capped().max() != 0) {
                    reported.append("max", number(options.capped().max()));
                }
            }
            collection.getDocument("options", new BsonDocument()).forEach(reported::append);
            if (options.collation() != null) {
                reported.append("collation", options.collation().specification());
            }
            collection.put("options", reported);
        }
    }

    /**
     * Adds {@code capped} (and for a capped collection {@code max} and {@code maxSize}) to a {@code collStats} reply,
     * as {@code src/mongo/db/stats/storage_stats.cpp} reports them.
     */
    void reportStats(String namespace, BsonDocument reply) {
        if (reply.getNumber("ok", new BsonInt32(0)).intValue() != 1) {
            return;
        }
        Options options = byNamespace.get(namespace);
        Capped capped = options == null ? null : options.capped();
        reply.put("capped", BsonBoolean.valueOf(capped != null));
        if (capped != null) {
            reply.put("max", number(capped.max()));
            reply.put("maxSize", number(capped.size()));
        }
    }

    /** An int32 when it fits, as the server's {@code appendNumber} writes it. */
    private static BsonValue number(long value) {
        return value == (int) value ? new BsonInt32((int) value) : new BsonInt64(value);
    }

    private static boolean truthy(BsonValue value) {
        if (value == null || value.isNull()) {
            return false;
        }
        if (value.isBoolean()) {
            return value.asBoolean().getValue();
        }
        return !value.isNumber() || value.asNumber().doubleValue() != 0;
    }

    /** {@return the command's collection as a namespace} */
    static String namespace(String database, BsonDocument command) {
        BsonValue name = command.get(command.getFirstKey());
        return database + "."
                + (name != null && name.isString() ? name.asString().getValue() : "");
    }

    /**
     * The emulator's refusal of what it does not emulate: an {@code InternalError} (1) whose message starts with
     * "emulator:" and names it, never a result the server would not give.
     */
    static EngineRefusal unemulated(String what) {
        return new EngineRefusal(
                1,
                "InternalError",
                "emulator: the testkit does not emulate " + what + "; test this on a real deployment");
    }

    /** An error the engine layer answers instead of the engine, as the server answers it. */
    static final class EngineRefusal extends RuntimeException {
        private static final long serialVersionUID = 1L;
        private final int code;
        private final String codeName;

        EngineRefusal(int code, String codeName, String message) {
            super(message, null, false, false);
            this.code = code;
            this.codeName = codeName;
        }

        /** {@return the command error reply} */
        BsonDocument reply() {
            return StorageEngine.error(code, codeName, getMessage());
        }

        /** {@return the write error, without its index} */
        BsonDocument writeError() {
            return new BsonDocument("code", new BsonInt32(code))
                    .append("codeName", new BsonString(codeName))
                    .append("errmsg", new BsonString(getMessage()));
        }
    }
}
