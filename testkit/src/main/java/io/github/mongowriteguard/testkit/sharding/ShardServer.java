package io.github.mongowriteguard.testkit.sharding;

import io.github.mongowriteguard.testkit.engine.StorageEngine;
import io.github.mongowriteguard.testkit.node.CommandExecutor;
import io.github.mongowriteguard.testkit.node.EmulatedNode;
import io.github.mongowriteguard.testkit.node.NodeInternals;
import io.github.mongowriteguard.testkit.node.OperationContext;
import io.github.mongowriteguard.testkit.stall.Stall;
import io.github.mongowriteguard.testkit.wire.ClientConnection;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.OptionalLong;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Supplier;
import org.bson.BsonArray;
import org.bson.BsonBoolean;
import org.bson.BsonDateTime;
import org.bson.BsonDocument;
import org.bson.BsonInt32;
import org.bson.BsonInt64;
import org.bson.BsonString;
import org.bson.BsonValue;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The shard role of one member of a shard replica set: its in-memory routing metadata ("ownership list") and
 * the shard version check of versioned reads, as 4.2/4.4 {@code collection_sharding_state.cpp} and
 * {@code shard_filtering_metadata_refresh.cpp} do it.
 *
 * <ul>
 *   <li>A {@code find} carrying {@code shardVersion} is answered only when the node's version of the collection
 *       equals it; otherwise (other version, or UNKNOWN: nothing in memory) the node first tries to refresh and
 *       then answers {@code StaleConfig} (13388), so mongos retries. With a known version, documents the shard
 *       does not own (orphans) are filtered out.</li>
 *   <li>{@code readConcern: {level: "available"}} skips the check and the filter: orphans are returned.</li>
 *   <li>A primary refreshes from the config server. A secondary sends {@code forceRoutingTableRefresh} (the old
 *       name of {@code _flushRoutingTableCacheUpdates}) to its primary and waits at most the refresh limit (30 s
 *       on a real server); the primary writes {@code config.cache.collections} through its own command pipeline
 *       (so a write stall holds it) and only that write, replicated, lets the secondary load the new version.</li>
 *   <li>{@link #restart()} empties the in-memory metadata, as a mongod restart does
 *       ({@code metadata_manager.cpp}).</li>
 * </ul>
 *
 * <p>Writes and unversioned commands run unchanged (writes carry no shard version check in the emulator).
 */
final class ShardServer implements CommandExecutor {
    private static final Logger log = LoggerFactory.getLogger(ShardServer.class);
    static final String FLUSH = "_flushRoutingTableCacheUpdates";
    static final String FLUSH_OLD_NAME = "forceRoutingTableRefresh";
    private static final AtomicLong INTERNAL_CONNECTIONS = new AtomicLong(-1_000_000);

    private final String shardId;
    private final boolean primary;
    private final Duration refreshLimit;
    private final ExecutorService refreshThreads;
    private final Map<String, CollectionRouting> metadata = new ConcurrentHashMap<>();
    /** What the shard's config.cache.collections holds (written by its primary; what secondaries load after replication). */
    private final Map<String, CollectionRouting> persisted;
    /** Where data commands run: the primary's engine (a non-replicating shard) or this member's replication role. */
    private final CommandExecutor data;
    /** The shard's critical sections and collection locks (shared by its members; only the primary writes). */
    private final CollectionCriticalSections criticalSections;

    private final AtomicLong staleConfigReplies = new AtomicLong();
    private final AtomicLong refreshFailures = new AtomicLong();
    private final List<String> log0 = java.util.Collections.synchronizedList(new ArrayList<>());
    private volatile ShardingCatalog catalog;
    private volatile EmulatedNode node;
    private volatile Supplier<EmulatedNode> primaryNode;
    private volatile EmulatedNode dataNode;

    /**
     * @param primary   whether this member is the primary of a shard that does not replicate (ignored for a member of a
     *                  replicating shard, whose role comes from its replica set)
     * @param persisted the shard's {@code config.cache.collections}, shared by its members
     * @param data      where the member's data commands run (null: the primary's storage engine)
     */
    ShardServer(
            String shardId,
            boolean primary,
            Duration refreshLimit,
            ExecutorService refreshThreads,
            Map<String, CollectionRouting> persisted,
            CommandExecutor data,
            CollectionCriticalSections criticalSections) {
        this.shardId = shardId;
        this.criticalSections = criticalSections;
        this.primary = primary;
        this.refreshLimit = refreshLimit;
        this.refreshThreads = refreshThreads;
        this.persisted = persisted;
        this.data = data != null ? data : (operation, command) -> engine().run(operation.database(), command);
    }

    /**
     * Completes the wiring once the nodes exist: a member of a non-replicating shard reads the primary's data, a member
     * of a replicating one its own.
     *
     * @param primaryNode the shard's primary now (null while there is none)
     */
    void bind(EmulatedNode self, Supplier<EmulatedNode> primaryNode, ShardingCatalog catalog) {
        this.node = self;
        this.primaryNode = primaryNode;
        this.dataNode = NodeInternals.of(self).membership() != null ? self : primaryNode.get();
        this.catalog = catalog;
    }

    /** The engine this member reads (its own in a replicating shard, replaced by restarts and rollbacks). */
    private StorageEngine engine() {
        return dataNode.engine();
    }

    boolean isPrimary() {
        EmulatedNode self = node;
        return self != null && NodeInternals.of(self).membership() != null
                ? NodeInternals.of(self).membership().isWritablePrimary()
                : primary;
    }

    /** The version this node holds in memory, empty when UNKNOWN. */
    OptionalLong version(String namespace) {
        CollectionRouting routing = metadata.get(namespace);
        return routing == null ? OptionalLong.empty() : OptionalLong.of(routing.version());
    }

    long staleConfigReplies() {
        return staleConfigReplies.get();
    }

    long refreshFailures() {
        return refreshFailures.get();
    }

    /** The node's log lines about refreshes (what an operator would grep for). */
    List<String> refreshLog() {
        synchronized (log0) {
            return List.copyOf(log0);
        }
    }

    /** A mongod restart: the in-memory routing metadata is gone; config.cache.* on disk stays. */
    void restart() {
        metadata.clear();
    }

    /** A primary taking part in a chunk change learns the new version as part of the commit. */
    void committed(String namespace) {
        Optional<CollectionRouting> routing = catalog.routing(namespace);
        if (routing.isPresent()) {
            metadata.put(namespace, routing.get());
            persisted.put(namespace, routing.get());
        } else {
            metadata.remove(namespace);
            persisted.remove(namespace);
        }
    }

    @Override
    public BsonDocument execute(OperationContext operation, BsonDocument command) {
        String name = command.getFirstKey();
        if (name.equals(FLUSH) || name.equals(FLUSH_OLD_NAME)) {
            return flush(operation, command);
        }
        if (!isPrimary() && (Stall.WRITE_COMMANDS.contains(name) || name.equalsIgnoreCase("findAndModify"))) {
            return StorageEngine.error(10107, "NotWritablePrimary", "not primary");
        }
        BsonDocument original = operation.command();
        if (name.equals("find") && original.containsKey("shardVersion")) {
            return versionedFind(operation, command, original);
        }
        if (original.containsKey("shardVersion") && VERSIONED_WRITES.contains(name)) {
            return versionedWrite(operation, command, original);
        }
        return data.execute(operation, command);
    }

    /**
     * A write of a multi-document transaction on a sharded collection: it takes the collection lock as any write, and
     * keeps it until the transaction ends ({@link CollectionCriticalSections#transactionWrote}), so a migration cannot
     * enter its critical section while the transaction is open (it fails with {@code LockTimeout} after
     * {@code migrationLockAcquisitionMaxWaitMS}). Arriving in a critical section, it waits for it to end, bounded by
     * its own deadline, and answers {@code StaleConfig} as a command error, which the transaction labels
     * {@code TransientTransactionError} ({@code src/mongo/db/error_labels.cpp}), so the driver's
     * {@code withTransaction} retries the whole transaction.
     */
    @Override
    public BsonDocument beforeTransactionStatement(OperationContext operation, BsonDocument command) {
        String name = command.getFirstKey();
        BsonDocument original = operation.command();
        if (!VERSIONED_WRITES.contains(name)
                || !command.isString(name)
                || !original.isDocument("lsid")
                || !original.isNumber("txnNumber")) {
            return null;
        }
        String namespace = operation.database() + "." + command.getString(name).getValue();
        if (catalog.routing(namespace).isEmpty()) {
            return null;
        }
        CollectionCriticalSections.Admission admission = criticalSections.admitWrite(namespace);
        if (!admission.admitted()) {
            CollectionCriticalSections.awaitExit(admission.criticalSection(), remainingNanos(operation));
            refresh(operation, namespace);
            staleConfigReplies.incrementAndGet();
            return StorageEngine.error(
                    13388,
                    "StaleConfig",
                    "the collection " + namespace + " on " + shardId + " (" + node.name()
                            + ") was in a migration's critical section");
        }
        try {
            BsonDocument lsid = original.getDocument("lsid");
            long txnNumber = original.getNumber("txnNumber").longValue();
            criticalSections.transactionWrote(
                    namespace,
                    lsid.toJson() + ":" + txnNumber,
                    () -> NodeInternals.of(node).transactionInProgress(lsid, txnNumber));
            return null;
        } finally {
            admission.release();
        }
    }

    private static final java.util.Set<String> VERSIONED_WRITES =
            java.util.Set.of("insert", "update", "delete", "findAndModify", "findandmodify");

    /**
     * A write mongos sent with a shard version (each statement of a retryable write passes here on its own, as
     * mongod checks the version per batch of statements): it runs holding the collection lock shared, so a migration
     * waits for it before entering its critical section ({@link CollectionCriticalSections}). In the critical section
     * it waits for the section to end, bounded by its own deadline, and answers StaleConfig (13388). Outside it, a
     * version other than the node's is refreshed first: when the node was only behind, the write runs (mongod refreshes
     * and runs the command again, {@code service_entry_point_common.cpp} / {@code service_entry_point_shard_role.cpp});
     * when mongos is behind, StaleConfig, so mongos refreshes and resends to the owner.
     */
    private BsonDocument versionedWrite(OperationContext operation, BsonDocument command, BsonDocument original) {
        String name = command.getFirstKey();
        String namespace = operation.database() + "." + command.getString(name).getValue();
        long received = original.get("shardVersion").asNumber().longValue();
        CollectionCriticalSections.Admission admission = criticalSections.admitWrite(namespace);
        if (!admission.admitted()) {
            CollectionCriticalSections.awaitExit(admission.criticalSection(), remainingNanos(operation));
            refresh(operation, namespace);
            return staleWrite(command, namespace, received, "the collection was in a migration's critical section");
        }
        try {
            CollectionRouting known = metadata.get(namespace);
            if (known == null || known.version() != received) {
                refresh(operation, namespace);
                known = metadata.get(namespace);
                if (known == null || known.version() != received) {
                    return staleWrite(command, namespace, received, "mongos sent an older version");
                }
            }
            return data.execute(operation, command);
        } finally {
            admission.release();
        }
    }

    /**
     * StaleConfig for a write: a command error for {@code findAndModify}; for a write command, as
     * {@code write_ops_exec.cpp handleError} does ("Don't try doing more ops since they will fail with the same
     * error"), a write error at the first statement, repeated for every later one when unordered.
     */
    private BsonDocument staleWrite(BsonDocument command, String namespace, long received, String why) {
        staleConfigReplies.incrementAndGet();
        CollectionRouting known = metadata.get(namespace);
        BsonValue wanted = known == null ? new BsonString("UNKNOWN") : new BsonInt64(known.version());
        String message = "shard version mismatch for " + namespace + " on " + shardId + " (" + node.name()
                + "): received " + received + ", wanted " + (known == null ? "UNKNOWN" : known.version()) + "; " + why;
        BsonDocument info = new BsonDocument("ns", new BsonString(namespace))
                .append("vReceived", new BsonInt64(received))
                .append("vWanted", wanted)
                .append("shardId", new BsonString(shardId));
        String name = command.getFirstKey();
        if (name.equalsIgnoreCase("findAndModify")) {
            BsonDocument reply = StorageEngine.error(13388, "StaleConfig", message);
            info.forEach(reply::append);
            return reply;
        }
        String field = name.equals("insert") ? "documents" : name.equals("update") ? "updates" : "deletes";
        int statements = command.getArray(field, new BsonArray()).size();
        boolean ordered = command.getBoolean("ordered", BsonBoolean.TRUE).getValue();
        BsonArray errors = new BsonArray();
        for (int i = 0; i < (ordered ? Math.min(1, statements) : statements); i++) {
            errors.add(new BsonDocument("index", new BsonInt32(i))
                    .append("code", new BsonInt32(13388))
                    .append("codeName", new BsonString("StaleConfig"))
                    .append("errmsg", new BsonString(message))
                    .append("errInfo", info));
        }
        BsonDocument reply = new BsonDocument("n", new BsonInt32(0));
        if (name.equals("update")) {
            reply.append("nModified", new BsonInt32(0));
        }
        return reply.append("writeErrors", errors).append("ok", new org.bson.BsonDouble(1));
    }

    private BsonDocument versionedFind(OperationContext operation, BsonDocument command, BsonDocument original) {
        String namespace =
                operation.database() + "." + command.getString("find").getValue();
        long received = original.get("shardVersion").asNumber().longValue();
        String level = original.getDocument("readConcern", new BsonDocument())
                .getString("level", new BsonString("local"))
                .getValue();
        CollectionRouting known = null;
        if (!level.equals("available")) {
            known = metadata.get(namespace);
            if (known == null || known.version() != received) {
                staleConfigReplies.incrementAndGet();
                String wanted = known == null ? "UNKNOWN" : String.valueOf(known.version());
                BsonDocument refreshError = refresh(operation, namespace);
                if (refreshError != null
                        && refreshError.getInt32("code", new BsonInt32(0)).getValue() == 50) {
                    return refreshError;
                }
                BsonDocument reply = StorageEngine.error(
                        13388,
                        "StaleConfig",
                        "shard version mismatch for " + namespace
                                + " on " + shardId + " (" + node.name() + "): received " + received + ", wanted "
                                + wanted
                                + (refreshError == null
                                        ? ""
                                        : "; refresh failed: "
                                                + refreshError
                                                        .getString("errmsg")
                                                        .getValue()));
                reply.append("ns", new BsonString(namespace))
                        .append("vReceived", new BsonInt64(received))
                        .append("vWanted", known == null ? new BsonString("UNKNOWN") : new BsonInt64(known.version()))
                        .append("shardId", new BsonString(shardId))
                        .append("host", new BsonString(node.address()));
                return reply;
            }
        }
        StorageEngine engine = engine();
        BsonDocument first = engine.run(operation.database(), command);
        if (first.get("ok", new BsonInt32(0)).asNumber().doubleValue() != 1) {
            return first;
        }
        List<BsonValue> documents = Engines.drain(engine, operation.database(), first);
        if (known != null) {
            CollectionRouting owner = known;
            documents.removeIf(d -> !owner.owns(shardId, d.asDocument()));
        }
        return new BsonDocument(
                        "cursor",
                        new BsonDocument("id", new BsonInt64(0))
                                .append("ns", new BsonString(namespace))
                                .append("firstBatch", new BsonArray(documents)))
                .append("ok", new org.bson.BsonDouble(1));
    }

    /**
     * {@code onShardVersionMismatch}: a primary loads from the config server; a secondary asks its primary and
     * waits for the replicated write. Returns null when the node now holds the collection's current version, else
     * the error that ended the refresh ({@code MaxTimeMSExpired} when the operation's own deadline came first).
     */
    private BsonDocument refresh(OperationContext operation, String namespace) {
        if (isPrimary()) {
            Optional<CollectionRouting> routing = catalog.routing(namespace);
            routing.ifPresentOrElse(r -> metadata.put(namespace, r), () -> metadata.remove(namespace));
            return null;
        }
        long limitNanos = refreshLimit.toNanos();
        long operationLeft = remainingNanos(operation);
        boolean operationFirst = operationLeft < limitNanos;
        long waitNanos = Math.max(0, Math.min(limitNanos, operationLeft));
        BsonDocument flush = new BsonDocument(FLUSH_OLD_NAME, new BsonString(namespace))
                .append("maxTimeMS", new BsonInt64(Math.max(1, refreshLimit.toMillis())));
        EmulatedNode primaryNow = primaryNode.get();
        if (primaryNow == null) {
            return refreshFailed(
                    namespace,
                    133,
                    "FailedToSatisfyReadPreference",
                    "Could not find host matching read" + " preference { mode: \"primary\" } for set " + shardId);
        }
        ClientConnection internal = ClientConnection.internal(INTERNAL_CONNECTIONS.decrementAndGet(), null);
        Future<BsonDocument> call = refreshThreads.submit(() -> primaryNow.handle(internal, "admin", flush));
        try {
            BsonDocument reply = call.get(waitNanos, TimeUnit.NANOSECONDS);
            if (reply.get("ok", new BsonInt32(0)).asNumber().doubleValue() != 1) {
                return refreshFailed(
                        namespace,
                        reply.getInt32("code", new BsonInt32(8)).getValue(),
                        reply.getString("codeName", new BsonString("UnknownError"))
                                .getValue(),
                        FLUSH_OLD_NAME + " on the primary failed: "
                                + reply.getString("errmsg", new BsonString("")).getValue());
            }
            // waitUntilOpTimeForRead: the shard's config.cache.collections is shared by its members here, so the
            // primary's write is visible at once.
            CollectionRouting loaded = persisted.get(namespace);
            if (loaded == null) {
                metadata.remove(namespace);
            } else {
                metadata.put(namespace, loaded);
            }
            return null;
        } catch (TimeoutException e) {
            // The primary's command is not cancelled: like a real one it keeps waiting for its write.
            if (operationFirst) {
                return refreshFailed(
                        namespace,
                        50,
                        "MaxTimeMSExpired",
                        "operation exceeded time limit while waiting" + " for " + FLUSH_OLD_NAME + " on the primary");
            }
            return refreshFailed(
                    namespace,
                    262,
                    "ExceededTimeLimit",
                    FLUSH_OLD_NAME + " sent to the primary "
                            + primaryNow.address() + " did not finish within " + refreshLimit.toMillis()
                            + " ms: the primary's"
                            + " write of config.cache.collections did not complete");
        } catch (ExecutionException e) {
            return refreshFailed(namespace, 8, "UnknownError", "refresh failed: " + e.getCause());
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return refreshFailed(namespace, 11601, "Interrupted", "refresh interrupted");
        }
    }

    private BsonDocument refreshFailed(String namespace, int code, String codeName, String message) {
        refreshFailures.incrementAndGet();
        String line =
                "Failed to refresh metadata for " + namespace + " on " + node.name() + ": " + codeName + ": " + message;
        log0.add(line);
        log.info(line);
        return StorageEngine.error(code, codeName, message);
    }

    /** {@code _flushRoutingTableCacheUpdates} on a primary: load from the config server, persist, reply. */
    private BsonDocument flush(OperationContext operation, BsonDocument command) {
        if (!isPrimary()) {
            return StorageEngine.error(
                    10107, "NotWritablePrimary", "_flushRoutingTableCacheUpdates runs on the primary");
        }
        String namespace = command.getString(command.getFirstKey()).getValue();
        Optional<CollectionRouting> routing = catalog.routing(namespace);
        if (routing.isEmpty()) {
            return new BsonDocument("ok", new org.bson.BsonDouble(1));
        }
        CollectionRouting current = routing.get();
        metadata.put(namespace, current);
        BsonDocument update = new BsonDocument("update", new BsonString("cache.collections"))
                .append(
                        "updates",
                        new BsonArray(List.of(new BsonDocument("q", new BsonDocument("_id", new BsonString(namespace)))
                                .append(
                                        "u",
                                        new BsonDocument("_id", new BsonString(namespace))
                                                .append("version", new BsonInt64(current.version()))
                                                .append("refreshing", BsonBoolean.FALSE)
                                                .append(
                                                        "lastRefreshedCollectionVersion",
                                                        new BsonInt64(current.version()))
                                                .append("updatedAt", new BsonDateTime(System.currentTimeMillis())))
                                .append("upsert", BsonBoolean.TRUE))));
        long left = remainingNanos(operation);
        if (left != Long.MAX_VALUE) {
            update.append("maxTimeMS", new BsonInt64(Math.max(1, TimeUnit.NANOSECONDS.toMillis(left))));
        }
        ClientConnection internal = ClientConnection.internal(INTERNAL_CONNECTIONS.decrementAndGet(), null);
        BsonDocument reply = node.handle(internal, "config", update);
        if (reply.get("ok", new BsonInt32(0)).asNumber().doubleValue() != 1) {
            return reply;
        }
        persisted.put(namespace, current);
        return new BsonDocument("ok", new org.bson.BsonDouble(1));
    }

    /** What is left of the operation's own deadline (mongod starts it after the fail point step). */
    private static long remainingNanos(OperationContext operation) {
        return operation.remainingNanos();
    }
}
