package io.github.mongowriteguard.testkit.sharding;

import io.github.mongowriteguard.testkit.auth.Principal;
import io.github.mongowriteguard.testkit.engine.StorageEngine;
import io.github.mongowriteguard.testkit.internal.Cursors;
import io.github.mongowriteguard.testkit.node.CommandExecutor;
import io.github.mongowriteguard.testkit.node.EmulatedNode;
import io.github.mongowriteguard.testkit.node.Membership;
import io.github.mongowriteguard.testkit.node.NodeInternals;
import io.github.mongowriteguard.testkit.node.OperationContext;
import io.github.mongowriteguard.testkit.node.SessionMatch;
import io.github.mongowriteguard.testkit.node.ShardOperations;
import io.github.mongowriteguard.testkit.wire.ClientConnection;
import io.github.mongowriteguard.testkit.wire.CommandHandler;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.atomic.AtomicLong;
import org.bson.BsonArray;
import org.bson.BsonBoolean;
import org.bson.BsonDocument;
import org.bson.BsonInt32;
import org.bson.BsonInt64;
import org.bson.BsonString;
import org.bson.BsonValue;

/**
 * The command executor of an emulated mongos: sharding admin commands, writes routed by {@link WriteRouter},
 * and reads good enough for tests. Shards are {@link EmulatedNode}s called in-process, so each child command
 * passes the shard's own fail point, session check-out, retryable-write table and stalls.
 *
 * <p>Reads on a sharded collection gather the matching documents from every shard and run the client's
 * command ({@code find}, {@code aggregate}, {@code count}, {@code distinct}) on a scratch engine, returning
 * everything in the first batch. Reads on unsharded collections and catalog commands go to the primary shard;
 * {@code create}, {@code createIndexes}, {@code dropIndexes}, {@code drop} and {@code dropDatabase} go to every
 * shard. The {@code config} database is the config server's.
 */
public final class MongosRouter implements CommandExecutor, ShardOperations, AutoCloseable {
    private static final AtomicLong SCRATCH = new AtomicLong();

    /** mongos' {@code kMaxNumStaleVersionRetries}. */
    public static final int DEFAULT_STALE_CONFIG_RETRIES = 10;

    private final Map<String, ShardReplicaSet> sets;
    private final int staleConfigRetries;
    private final ShardingCatalog catalog;
    private final RoutingStats stats = new RoutingStats();
    private final ShardLatency latency = new ShardLatency();
    private final ExecutorService executor = Executors.newCachedThreadPool(runnable -> {
        Thread thread = new Thread(runnable, "testkit-mongos-child");
        thread.setDaemon(true);
        return thread;
    });
    private final AsyncRequestsSender requests = new AsyncRequestsSender(executor);
    private final StorageEngine scratch = StorageEngine.scratch();
    private final WriteRouter writes;
    private final MigrationFailPoints migrationFailPoints = new MigrationFailPoints();
    private final MigrationSourceManager migrations;
    private final RouterTransactions transactions = new RouterTransactions(new RouterTransactions.Shards() {
        @Override
        public BsonDocument send(OperationContext operation, String shard, String database, BsonDocument command) {
            return MongosRouter.this.send(operation, shard, database, command);
        }

        @Override
        public boolean inProgress(String shard, BsonDocument lsid, long txnNumber) {
            // A transaction lives on the shard's primary; a failover ends it there (no primary: not in progress).
            EmulatedNode primary = sets.get(shard).primaryOrNull();
            return primary != null && NodeInternals.of(primary).transactionInProgress(lsid, txnNumber);
        }
    });

    /**
     * A router over single-node shards.
     *
     * @param shards  the shards by name, in order; the first is the primary shard of every database
     * @param catalog the config server's catalog
     */
    public MongosRouter(Map<String, EmulatedNode> shards, ShardingCatalog catalog) {
        this(single(shards), catalog, DEFAULT_STALE_CONFIG_RETRIES);
    }

    /**
     * A router over shards that are replica sets.
     *
     * @param sets               the shards as replica sets, in order; the first is every database's primary shard
     * @param staleConfigRetries how many times a read is sent again after {@code StaleConfig} before the error
     *                           reaches the client (10, as mongos' {@code kMaxNumStaleVersionRetries})
     * @param catalog            the config server's catalog
     */
    public MongosRouter(Map<String, ShardReplicaSet> sets, ShardingCatalog catalog, int staleConfigRetries) {
        this.sets = new LinkedHashMap<>(sets);
        this.catalog = catalog;
        this.staleConfigRetries = staleConfigRetries;
        this.writes = new WriteRouter(catalog, new Channel(), stats, latency);
        this.migrations = new MigrationSourceManager(
                this.sets,
                catalog,
                migrationFailPoints,
                CollectionCriticalSections.MIGRATION_LOCK_ACQUISITION_MAX_WAIT);
    }

    private static Map<String, ShardReplicaSet> single(Map<String, EmulatedNode> shards) {
        Map<String, ShardReplicaSet> sets = new LinkedHashMap<>();
        shards.forEach((name, node) -> sets.put(name, ShardReplicaSet.of(name, node)));
        return sets;
    }

    /** {@return what this router routed} */
    public RoutingStats routing() {
        return stats;
    }

    /** {@return the latency model of its child batches} */
    public ShardLatency latency() {
        return latency;
    }

    /** {@return the config server's catalog} */
    public ShardingCatalog catalog() {
        return catalog;
    }

    @Override
    public BsonDocument execute(OperationContext operation, BsonDocument command) {
        String commandName = command.getFirstKey();
        String database = operation.database();
        if (database.equals("config")) {
            return catalog.configEngine().run(database, command);
        }
        if (RouterTransactions.isTransactionCommand(operation.command())) {
            return transactions.run(operation, () -> route(operation, command));
        }
        return route(operation, command);
    }

    private BsonDocument route(OperationContext operation, BsonDocument command) {
        String commandName = command.getFirstKey();
        String database = operation.database();
        switch (commandName) {
            case "enableSharding":
            case "enablesharding":
                catalog.enableSharding(command.getString(commandName).getValue());
                return ok();
            case "shardCollection":
            case "shardcollection":
                return shardCollection(command);
            case "insert":
            case "update":
            case "delete":
                return writes.route(operation, command);
            case "find":
            case "aggregate":
            case "count":
            case "distinct":
                Optional<ChunkMap> map = catalog.chunkMap(namespace(database, command));
                if (map.isEmpty()) {
                    return forward(operation, catalog.primaryShard());
                }
                return transactions.inTransaction(operation)
                        ? gatherAndRun(operation, command)
                        : transactions.outsideRead(() -> gatherAndRun(operation, command));
            case "findAndModify":
            case "findandmodify":
                return findAndModify(operation, command);
            case "create":
            case "createIndexes":
            case "dropIndexes":
            case "drop":
            case "dropDatabase":
                return broadcast(operation, command);
            default:
                return forward(operation, catalog.primaryShard());
        }
    }

    // ---- sharding metadata ------------------------------------------------------------------------------

    /**
     * {@code shardCollection}: an empty collection on a hashed key is pre-split as the emulated version does
     * ({@link ChunkMap#hashedInitialChunks}); otherwise one chunk on the primary shard. Sharding is enabled on the
     * database implicitly (a real 4.4 mongos asks for {@code enableSharding} first).
     */
    private BsonDocument shardCollection(BsonDocument command) {
        String namespace = command.getString(command.getFirstKey()).getValue();
        ShardKey key;
        try {
            key = ShardKey.of(command.getDocument("key"));
        } catch (RuntimeException e) {
            return StorageEngine.error(2, "BadValue", e.getMessage());
        }
        Optional<ChunkMap> existing = catalog.chunkMap(namespace);
        if (existing.isPresent()) {
            return existing.get().key().equals(key)
                    ? ok().append("collectionsharded", new BsonString(namespace))
                    : StorageEngine.error(
                            20, "AlreadyInitialized", "sharding already enabled for collection " + namespace);
        }
        int numInitialChunks =
                command.get("numInitialChunks", new BsonInt32(0)).asNumber().intValue();
        shardCollection(
                namespace, key, command.getBoolean("unique", BsonBoolean.FALSE).getValue(), numInitialChunks);
        return ok().append("collectionsharded", new BsonString(namespace));
    }

    /**
     * The Java form of {@code shardCollection}; {@code numInitialChunks} 0 means the default.
     *
     * @param namespace        {@code db.collection}
     * @param key              the shard key
     * @param unique           whether the key is unique
     * @param numInitialChunks chunks of an empty hashed collection, 0 for 2 per shard
     * @return the collection's chunks
     */
    public ChunkMap shardCollection(String namespace, ShardKey key, boolean unique, int numInitialChunks) {
        String database = namespace.substring(0, namespace.indexOf('.'));
        String collection = namespace.substring(namespace.indexOf('.') + 1);
        catalog.enableSharding(database);
        long documents = 0;
        for (ShardReplicaSet set : sets.values()) {
            EmulatedNode shard = set.primary();
            shard.engine().run(database, new BsonDocument("create", new BsonString(collection)));
            BsonDocument count = shard.engine().run(database, new BsonDocument("count", new BsonString(collection)));
            documents += count.get("n", new BsonInt32(0)).asNumber().longValue();
        }
        ChunkMap map = key.isHashed() && key.fields().size() == 1 && documents == 0
                ? ChunkMap.hashedInitialChunks(key, catalog.shards(), numInitialChunks, catalog.version())
                : ChunkMap.single(key, catalog.primaryShard());
        catalog.put(namespace, map, unique);
        return map;
    }

    /**
     * The shard a {@code findAndModify} goes to: on a sharded collection, the owner of the shard-key point its query
     * pins ({@code cluster_find_and_modify_cmd.cpp} targets by the shard key); otherwise the primary shard.
     */
    private String findAndModifyTarget(OperationContext operation, BsonDocument command) {
        String namespace = namespace(operation.database(), command);
        List<String> targets = targets(namespace, command.getDocument("query", new BsonDocument()));
        return catalog.chunkMap(namespace).isPresent() && targets.size() == 1 ? targets.get(0) : catalog.primaryShard();
    }

    /**
     * {@code findAndModify} on a sharded collection carries the shard version outside a transaction; a StaleConfig
     * answer (the owner was in a migration's critical section, or moved) makes mongos refresh and send it again to
     * the owner, up to {@code staleConfigRetries} times ({@code cluster_find_and_modify_cmd.cpp} runs in mongos'
     * stale-version retry loop).
     */
    private BsonDocument findAndModify(OperationContext operation, BsonDocument command) {
        String namespace = namespace(operation.database(), command);
        boolean versioned = catalog.chunkMap(namespace).isPresent() && !transactions.inTransaction(operation);
        for (int attempt = 0; ; attempt++) {
            String shard = findAndModifyTarget(operation, command);
            BsonDocument sent = operation.command().clone();
            if (versioned) {
                catalog.routing(namespace).ifPresent(r -> sent.put("shardVersion", new BsonInt64(r.version())));
            }
            BsonDocument reply = sendFor(operation, shard, sent);
            int code = reply.get("code", new BsonInt32(0)).asNumber().intValue();
            if (!versioned || code != WriteRouter.STALE_CONFIG || attempt >= staleConfigRetries) {
                return reply;
            }
            stats.staleWriteBatch();
        }
    }

    // ---- reads ------------------------------------------------------------------------------------------

    private BsonDocument gatherAndRun(OperationContext operation, BsonDocument command) {
        String commandName = command.getFirstKey();
        String collection = command.getString(commandName).getValue();
        BsonDocument filter = readFilter(command);
        Map<String, List<BsonDocument>> perShard = new LinkedHashMap<>();
        java.util.Set<BsonValue> ids = new java.util.HashSet<>();
        boolean duplicates = false;
        for (String shard : targets(operation.database() + "." + collection, filter)) {
            try {
                List<BsonDocument> documents = findAll(operation, shard, collection, filter);
                perShard.put(shard, documents);
                for (BsonDocument document : documents) {
                    duplicates |= !ids.add(document.get("_id"));
                }
            } catch (ShardReadException e) {
                return e.reply();
            }
        }
        if (!duplicates) {
            List<BsonDocument> all = new ArrayList<>();
            perShard.values().forEach(all::addAll);
            return runOnScratch(operation, command, collection, all);
        }
        // The same _id on two shards (orphans read with readConcern "available"): as mongos, answer each shard's
        // part on its own and merge the streams. Counts add up; find results are concatenated, then limited.
        List<BsonValue> merged = new ArrayList<>();
        long n = 0;
        BsonDocument last = null;
        for (List<BsonDocument> documents : perShard.values()) {
            BsonDocument reply = runOnScratch(operation, command, collection, documents);
            if (reply.get("ok", new BsonInt32(0)).asNumber().doubleValue() != 1) {
                return reply;
            }
            last = reply;
            if (reply.containsKey("cursor")) {
                merged.addAll(reply.getDocument("cursor").getArray("firstBatch"));
            } else if (reply.containsKey("n")) {
                n += reply.get("n").asNumber().longValue();
            }
        }
        if (last == null || !last.containsKey("cursor")) {
            return last == null ? ok().append("n", new BsonInt64(0)) : last.append("n", new BsonInt64(n));
        }
        long limit = Math.abs(command.get("limit", new BsonInt64(0)).asNumber().longValue());
        if (limit > 0 && merged.size() > limit) {
            merged = new ArrayList<>(merged.subList(0, (int) limit));
        }
        last.getDocument("cursor").put("firstBatch", new BsonArray(merged));
        return last;
    }

    /** Runs the client's read command over {@code documents} on a scratch engine; the whole answer in one batch. */
    private BsonDocument runOnScratch(
            OperationContext operation, BsonDocument command, String collection, List<BsonDocument> documents) {
        String scratchDb = "mongos_scratch_" + SCRATCH.incrementAndGet();
        try {
            scratch.run(scratchDb, new BsonDocument("create", new BsonString(collection)));
            if (!documents.isEmpty()) {
                scratch.run(
                        scratchDb,
                        new BsonDocument("insert", new BsonString(collection))
                                .append("documents", new BsonArray(new ArrayList<>(documents))));
            }
            BsonDocument reply = scratch.run(scratchDb, command);
            if (!reply.containsKey("cursor")
                    || reply.get("ok", new BsonInt32(0)).asNumber().doubleValue() != 1) {
                return reply;
            }
            // Drain the scratch cursor: mongos answers with everything in the first batch (cursor id 0).
            List<BsonValue> all = new ArrayList<>(Cursors.drain(scratch::run, scratchDb, reply));
            reply.put(
                    "cursor",
                    new BsonDocument("id", new BsonInt64(0))
                            .append("ns", new BsonString(operation.database() + "." + collection))
                            .append("firstBatch", new BsonArray(all)));
            return reply;
        } finally {
            scratch.run(scratchDb, new BsonDocument("dropDatabase", new BsonInt32(1)));
        }
    }

    /** The shards a read must ask: the owner when the filter pins the shard key to one point, else every shard. */
    private List<String> targets(String namespace, BsonDocument filter) {
        Optional<ChunkMap> map = catalog.chunkMap(namespace);
        if (map.isPresent()) {
            Optional<BsonDocument> point = map.get().key().pointOfFilter(filter);
            if (point.isPresent()) {
                return List.of(map.get().shardOf(point.get()));
            }
        }
        return List.copyOf(sets.keySet());
    }

    /**
     * One shard's part of a read: the member chosen by the client's {@code $readPreference}, the shard version
     * attached, the client's {@code readConcern} and remaining {@code maxTimeMS} passed on; {@code StaleConfig} is
     * retried up to {@code staleConfigRetries} times (mongos' routing table is the catalog, always fresh), then
     * the error goes to the client.
     */
    private List<BsonDocument> findAll(
            OperationContext operation, String shard, String collection, BsonDocument filter) {
        BsonDocument client = operation.command();
        boolean inTransaction = transactions.inTransaction(operation);
        // A transaction reads from the primaries, where it runs (a read preference other than primary is refused).
        EmulatedNode node = inTransaction
                ? sets.get(shard).targetPrimary(operation.remainingNanos())
                : sets.get(shard).select(client.get("$readPreference"));
        String namespace = operation.database() + "." + collection;
        long deadline = client.containsKey("maxTimeMS")
                        && client.get("maxTimeMS").asNumber().longValue() > 0
                ? operation.startNanos()
                        + java.util.concurrent.TimeUnit.MILLISECONDS.toNanos(
                                client.get("maxTimeMS").asNumber().longValue())
                : 0;
        for (int attempt = 0; ; attempt++) {
            BsonDocument find = new BsonDocument("find", new BsonString(collection)).append("filter", filter);
            catalog.routing(namespace).ifPresent(r -> find.append("shardVersion", new BsonInt64(r.version())));
            if (client.containsKey("readConcern")) {
                find.append("readConcern", client.get("readConcern"));
            }
            // mongos passes the read preference on to the shard host (which lets a secondary serve the read).
            BsonValue preference = client.get("$readPreference");
            if (preference != null) {
                find.append("$readPreference", preference);
            }
            if (deadline != 0) {
                long left = deadline - System.nanoTime();
                if (left <= 0) {
                    throw new ShardReadException(
                            StorageEngine.error(50, "MaxTimeMSExpired", "operation exceeded time limit"));
                }
                find.append(
                        "maxTimeMS",
                        new BsonInt64(Math.max(1, java.util.concurrent.TimeUnit.NANOSECONDS.toMillis(left))));
            }
            BsonDocument reply;
            BsonDocument sent = transactions.decorate(operation, shard, find);
            if (sent == null) {
                throw new ShardReadException(transactions.failure(operation));
            }
            try {
                reply = node.handle(connection(operation.connection()), operation.database(), sent);
            } catch (CommandHandler.CloseConnectionSignal e) {
                reply = WriteRouter.shardUnreachable(shard);
            }
            transactions.observe(operation, shard, reply);
            if (reply.get("ok", new BsonInt32(0)).asNumber().doubleValue() == 1) {
                List<BsonDocument> documents = new ArrayList<>();
                // In a transaction the cursor lives in the shard's transaction: each getMore is one of its statements.
                Cursors.drain(
                                (db, cmd) -> node.handle(
                                        connection(operation.connection()),
                                        db,
                                        inTransaction
                                                ? transactions.decorate(operation, shard, cmd)
                                                : preference == null
                                                        ? cmd
                                                        : cmd.clone().append("$readPreference", preference)),
                                operation.database(),
                                reply)
                        .forEach(d -> documents.add(d.asDocument()));
                return documents;
            }
            if (inTransaction) {
                throw new ShardReadException(reply);
            }
            int code = reply.get("code", new BsonInt32(0)).asNumber().intValue();
            if (code != 13388 || attempt >= staleConfigRetries) {
                throw new ShardReadException(reply);
            }
            stats.staleConfigRetried();
        }
    }

    /**
     * A chunk migration up to its commit: the documents of the chunk holding {@code document}'s shard key are copied
     * to {@code toShard}, ownership moves (one collection version more), and the copies on the donor stay as orphans
     * until {@link ChunkMigration#deleteOrphans()} runs the range deleter.
     *
     * @throws IllegalArgumentException when the collection is not sharded, the shard is unknown or already owns it
     * @param namespace {@code db.collection}, sharded
     * @param document  a document (or shard-key point) of the chunk to move
     * @param toShard   the recipient shard's name
     * @return the migration
     */
    public ChunkMigration moveChunk(String namespace, BsonDocument document, String toShard) {
        return moveChunk(namespace, document, toShard, false);
    }

    /**
     * {@link #moveChunk(String, BsonDocument, String)}, also carrying the retry history of the chunk's documents to
     * the recipient as the session migration does (mongodb/mongo {@code src/mongo/db/s/session_catalog_migration_source.cpp}
     * sends the oplog entries of the sessions' writes to the chunk; {@code session_catalog_migration_destination.cpp}
     * applies them): a retry routed to the recipient returns the recorded result instead of writing again. With
     * {@code donorOplogRolledOver} the donor cannot read that history and sends the dead-end sentinel instead: the
     * recipient answers a retry of those sessions' statements with {@code IncompleteTransactionHistory} (217).
     *
     * @param namespace            {@code db.collection}, sharded
     * @param document             a document whose shard key selects the chunk
     * @param toShard              the recipient shard's name
     * @param donorOplogRolledOver whether the donor lost the history and sends the dead-end sentinel
     * @return the migration, to delete the donor's orphans
     */
    public ChunkMigration moveChunk(
            String namespace, BsonDocument document, String toShard, boolean donorOplogRolledOver) {
        return migrations.moveChunk(namespace, document, toShard, donorOplogRolledOver);
    }

    /** {@return the donors' {@code moveChunkHangAtStep*} fail points, to hold a migration between its phases} */
    public MigrationFailPoints migrationFailPoints() {
        return migrationFailPoints;
    }

    /** The filter that selects every document the command can see, so shards send no more than needed. */
    private static BsonDocument readFilter(BsonDocument command) {
        switch (command.getFirstKey()) {
            case "find":
                return command.getDocument("filter", new BsonDocument());
            case "count":
            case "distinct":
                return command.getDocument("query", new BsonDocument());
            default:
                BsonArray pipeline = command.getArray("pipeline", new BsonArray());
                if (!pipeline.isEmpty() && pipeline.get(0).asDocument().containsKey("$match")) {
                    return pipeline.get(0).asDocument().getDocument("$match");
                }
                return new BsonDocument();
        }
    }

    // ---- forwarding -------------------------------------------------------------------------------------

    private BsonDocument forward(OperationContext operation, String shard) {
        return sendFor(operation, shard, operation.command().clone());
    }

    /**
     * A client's command (or a child of it) to one shard; within a transaction with the transaction's fields. mongos
     * waits for the answer as an interrupt point ({@link AsyncRequestsSender}): when its own deadline passes or it is
     * killed first, the command fails with that status and the shard's answer is dropped.
     */
    private BsonDocument sendFor(OperationContext operation, String shard, BsonDocument command) {
        BsonDocument sent = transactions.decorate(operation, shard, command);
        if (sent == null) {
            return transactions.failure(operation);
        }
        BsonDocument reply = requests.sendAll(
                        operation,
                        List.<AsyncRequestsSender.Request<BsonDocument>>of(
                                remote -> send(operation, shard, operation.database(), sent, remote)),
                        (remote, status) -> StorageEngine.error(status.code(), status.codeName(), status.getMessage()),
                        (remote, cause) -> emulatorFailure(shard, cause))
                .get(0);
        transactions.observe(operation, shard, reply);
        return reply;
    }

    /**
     * Runs a catalog command on every shard. The cluster's answer is the first shard's success: a shard that never
     * held the collection may answer NamespaceNotFound (26) or NamespaceExists (48) without the command failing.
     * When every shard fails, the primary shard's error is the answer.
     */
    private BsonDocument broadcast(OperationContext operation, BsonDocument command) {
        BsonDocument firstOk = null;
        BsonDocument firstError = null;
        for (String shard : sets.keySet()) {
            BsonDocument reply = sendFor(operation, shard, operation.command().clone());
            if (reply.get("ok", new BsonInt32(0)).asNumber().doubleValue() == 1) {
                firstOk = firstOk == null ? reply : firstOk;
            } else {
                firstError = firstError == null ? reply : firstError;
            }
        }
        String commandName = command.getFirstKey();
        if (commandName.equals("drop")) {
            catalog.remove(namespace(operation.database(), command));
        } else if (commandName.equals("dropDatabase")) {
            catalog.shardedCollections(operation.database()).forEach(catalog::remove);
        }
        return firstOk != null ? firstOk : firstError;
    }

    /**
     * Sends a command to the shard's primary as mongos' replica set monitor finds it, and tells the monitor what the
     * reply says of that host ({@code ShardRemote::updateReplSetMonitor} then
     * {@code RemoteCommandTargeter::updateHostWithStatus}: a not-primary, network or shutdown error marks the host
     * failed, so the next targeting looks for the primary again).
     */
    private BsonDocument send(OperationContext operation, String shard, String database, BsonDocument command) {
        return send(operation, shard, database, command, null);
    }

    /**
     * {@link #send(OperationContext, String, String, BsonDocument)} as one send of an {@link AsyncRequestsSender}
     * remote: it carries the operation's time left now, and the remote learns the host it went to.
     */
    private BsonDocument send(
            OperationContext operation,
            String shard,
            String database,
            BsonDocument command,
            AsyncRequestsSender.Remote remote) {
        ShardReplicaSet set = sets.get(shard);
        EmulatedNode target;
        try {
            target = set.targetPrimary(operation.remainingNanos());
        } catch (ShardReadException e) {
            return e.reply();
        }
        BsonDocument sent = command;
        if (remote != null) {
            long left = operation.remainingNanos();
            if (left == 0) {
                return StorageEngine.error(50, "MaxTimeMSExpired", "operation exceeded time limit");
            }
            if (left != Long.MAX_VALUE) {
                sent = command.clone();
                sent.put(
                        "maxTimeMS",
                        new BsonInt64(Math.max(1, java.util.concurrent.TimeUnit.NANOSECONDS.toMillis(left))));
            }
            remote.sentTo(target.address());
        }
        try {
            BsonDocument reply = target.handle(connection(operation.connection()), database, sent);
            set.noteReply(target, reply);
            return reply;
        } catch (CommandHandler.CloseConnectionSignal e) {
            set.failedHost(target);
            return WriteRouter.shardUnreachable(shard);
        }
    }

    private static BsonDocument emulatorFailure(String shard, Throwable cause) {
        return StorageEngine.error(1, "InternalError", "request to " + shard + " failed in the emulator: " + cause);
    }

    /**
     * The connection a shard sees for mongos' calls on behalf of one client connection; it carries the client's
     * appName, so a shard's fail point can select one application (a real mongos would not forward it).
     */
    private static ClientConnection connection(ClientConnection client) {
        return ClientConnection.internal(client.id(), client.appName(), client.principal());
    }

    // ---- introspection and kills on the shards ----------------------------------------------------------

    /**
     * {@inheritDoc}
     *
     * <p>Asks each shard's primary, in shard order (mongos' {@code $currentOp} targets the shards' primaries), over the
     * network as mongos reaches it: a shard without a primary fails the command as mongos' targeting does
     * ({@code FailedToSatisfyReadPreference} after the wait for one, or {@code MaxTimeMSExpired} at the command's
     * deadline); a primary that is down or cut off with closed connections fails it with {@code HostUnreachable}; one
     * behind a black hole answers nothing until the command's deadline ({@code MaxTimeMSExpired}) or until it heals
     * (the connection then closes: {@code HostUnreachable}).
     */
    @Override
    public List<BsonDocument> shardCurrentOps(OperationContext operation, boolean truncate, Principal ownOpsOf) {
        List<BsonDocument> all = new ArrayList<>();
        for (Map.Entry<String, ShardReplicaSet> shard : sets.entrySet()) {
            stats.currentOpShardRequested();
            EmulatedNode primary = reachablePrimary(operation, shard.getValue());
            for (BsonDocument op : NodeInternals.of(primary).currentOps(truncate, ownOpsOf)) {
                BsonDocument shown = new BsonDocument("shard", new BsonString(shard.getKey()));
                for (Map.Entry<String, BsonValue> field : op.entrySet()) {
                    switch (field.getKey()) {
                        case "opid" ->
                            shown.append(
                                    "opid",
                                    new BsonString(shard.getKey() + ":"
                                            + field.getValue().asNumber().intValue()));
                        case "client" -> shown.append("client_s", field.getValue());
                        default -> shown.append(field.getKey(), field.getValue());
                    }
                }
                all.add(shown);
            }
        }
        return all;
    }

    /** The shard's primary as mongos targets and reaches it, or the error the command fails with. */
    private static EmulatedNode reachablePrimary(OperationContext operation, ShardReplicaSet set) {
        EmulatedNode primary;
        try {
            primary = set.targetPrimary(operation.remainingNanos());
        } catch (ShardReadException e) {
            throw new ShardOperations.Unreachable(e.reply());
        }
        while (KillSessionsRemote.reach(primary) == Membership.Reach.BLACKHOLED) {
            if (operation.remainingNanos() == 0) {
                set.failedHost(primary);
                throw new ShardOperations.Unreachable(
                        StorageEngine.error(50, "MaxTimeMSExpired", "operation exceeded time limit"));
            }
            io.github.mongowriteguard.testkit.internal.Sleeps.until(
                    System.nanoTime() + java.util.concurrent.TimeUnit.MILLISECONDS.toNanos(10));
        }
        if (KillSessionsRemote.reach(primary) != Membership.Reach.SERVING) {
            set.failedHost(primary);
            throw new ShardOperations.Unreachable(StorageEngine.error(
                    6, "HostUnreachable", "Connection closed by peer: " + primary.address() + " is unreachable"));
        }
        return primary;
    }

    /** {@inheritDoc} Every member of every shard replica set that the network lets mongos reach ({@link KillSessionsRemote}). */
    @Override
    public List<String> killSessionsOnShards(OperationContext operation, List<SessionMatch> patterns) {
        return KillSessionsRemote.kill(sets.values(), patterns, operation.remainingNanos());
    }

    /**
     * mongos' {@code AsyncRequestsSender} retries: at most 3 times (4 sends) per child batch
     * ({@code kMaxNumFailedHostRetryAttempts}), only for a retryable write ({@code isRetryableWrite}: a
     * {@code txnNumber} outside a transaction gives {@code Shard::RetryPolicy::kIdempotent}, anything else
     * {@code kNoRetry}), after a network error, a retryable command error or a retryable write-concern error
     * ({@code handleResponse} checks all three; {@code ShardRemote::isRetriableError} with kIdempotent is the
     * {@code RetriableError} category). From mongodb/mongo {@code src/mongo/s/async_requests_sender.cpp},
     * {@code src/mongo/s/write_ops/batch_write_exec.cpp}, {@code src/mongo/s/client/shard_remote.cpp}.
     */
    public static final int MAX_SHARD_RETRIES = 3;

    /**
     * Child batches of one round, sent concurrently through {@link AsyncRequestsSender}; latency is slept per batch
     * before the shard runs it. A batch mongos stopped waiting for (its deadline passed, or it was killed) fails as a
     * whole with that status, "Write results unavailable from &lt;host&gt;" ({@code processErrorResponseFromLocal} in
     * mongodb/mongo {@code src/mongo/s/write_ops/batch_write_exec.cpp}), and is not retried.
     */
    private final class Channel implements WriteRouter.ShardChannel {
        @Override
        public List<WriteRouter.Sent> sendAll(OperationContext operation, List<WriteRouter.Send> sends) {
            List<AsyncRequestsSender.Request<WriteRouter.Sent>> remotes = new ArrayList<>();
            for (WriteRouter.Send send : sends) {
                remotes.add(remote -> sendWithRetries(operation, send, remote));
            }
            List<WriteRouter.Sent> replies = requests.sendAll(
                    operation,
                    remotes,
                    (remote, status) -> new WriteRouter.Sent(
                            StorageEngine.error(
                                    status.code(),
                                    status.codeName(),
                                    "Write results unavailable from "
                                            + (remote.host() == null ? "failing to target a host in the shard " : "")
                                            + (remote.host() == null ? "" : remote.host())
                                            + " :: caused by :: " + status.getMessage()),
                            remote.attempts()),
                    (remote, cause) -> new WriteRouter.Sent(emulatorFailure("a shard", cause), remote.attempts()));
            return replies;
        }

        private WriteRouter.Sent sendWithRetries(
                OperationContext operation, WriteRouter.Send send, AsyncRequestsSender.Remote remote) {
            // A transaction's statements are never resent (Shard::RetryPolicy::kNoRetry): the transaction retries
            // whole.
            boolean retryable = !transactions.inTransaction(operation) && isRetryableWrite(send.child());
            for (int attempt = 1; ; attempt++) {
                long start = System.nanoTime();
                BsonDocument child = transactions.decorate(operation, send.shard(), send.child());
                if (child == null) {
                    return new WriteRouter.Sent(transactions.failure(operation), attempt);
                }
                BsonDocument reply = send(operation, send.shard(), send.database(), child, remote);
                latency.completeBatch(send.shard(), send.writes(), start);
                if (remote.stopRetrying()) {
                    return new WriteRouter.Sent(reply, attempt); // mongos no longer waits: the answer is dropped
                }
                transactions.observe(operation, send.shard(), reply);
                if (!retryable || attempt > MAX_SHARD_RETRIES || !isRetriableReply(reply)) {
                    return new WriteRouter.Sent(reply, attempt);
                }
                stats.shardRetried();
            }
        }
    }

    private static boolean isRetryableWrite(BsonDocument child) {
        return child.containsKey("txnNumber") && !child.containsKey("autocommit");
    }

    /** The command's status, then its write-concern status, as {@code AsyncRequestsSender::handleResponse} reads them. */
    private static boolean isRetriableReply(BsonDocument reply) {
        if (reply.get("ok", new BsonInt32(0)).asNumber().doubleValue() != 1) {
            return RETRIABLE_ERRORS.contains(
                    reply.get("code", new BsonInt32(0)).asNumber().intValue());
        }
        BsonValue wce = reply.get("writeConcernError");
        return wce != null
                && wce.isDocument()
                && RETRIABLE_ERRORS.contains(wce.asDocument()
                        .get("code", new BsonInt32(0))
                        .asNumber()
                        .intValue());
    }

    /**
     * The {@code RetriableError} category of mongodb/mongo {@code src/mongo/base/error_codes.yml} (codes a 4.4-8.0
     * shard can send mongos): HostUnreachable, HostNotFound, NetworkTimeout, ShutdownInProgress,
     * ReadConcernMajorityNotAvailableYet, PrimarySteppedDown, ExceededTimeLimit, SocketException, NotWritablePrimary,
     * InterruptedAtShutdown, InterruptedDueToReplStateChange, NotPrimaryNoSecondaryOk, NotPrimaryOrSecondary.
     */
    static final java.util.Set<Integer> RETRIABLE_ERRORS =
            java.util.Set.of(6, 7, 89, 91, 134, 189, 262, 9001, 10107, 11600, 11602, 13435, 13436);

    static String namespace(String database, BsonDocument command) {
        BsonValue target = command.get(command.getFirstKey());
        return database + "."
                + (target != null && target.isString() ? target.asString().getValue() : "$cmd");
    }

    private static BsonDocument ok() {
        return new BsonDocument("ok", new org.bson.BsonDouble(1));
    }

    @Override
    public void close() {
        executor.shutdownNow();
        scratch.close();
    }
}
