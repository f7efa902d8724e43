package io.github.mongowriteguard.testkit.sharding;

import io.github.mongowriteguard.testkit.engine.StorageEngine;
import io.github.mongowriteguard.testkit.node.OperationContext;
import io.github.mongowriteguard.testkit.server.ServerVersion;
import io.github.mongowriteguard.testkit.wire.Bson;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.TreeMap;
import org.bson.BsonArray;
import org.bson.BsonBoolean;
import org.bson.BsonDocument;
import org.bson.BsonDouble;
import org.bson.BsonInt32;
import org.bson.BsonString;
import org.bson.BsonValue;

/**
 * mongos' write path for {@code insert}, {@code update} and {@code delete}: target every write, cut the writes
 * into rounds of child batches with the rules of {@code BatchWriteOp::targetBatch}, send each round's batches
 * concurrently, and merge the shards' replies into one reply in the client's indices.
 *
 * <ul>
 *   <li>ORDERED: a round is one child batch to one shard; it ends before the first write that targets another
 *       shard. A write that targets several shards (no shard key in its filter) is a round of its own, one batch
 *       per shard. After a round with an error, nothing more is sent.</li>
 *   <li>UNORDERED: every remaining write in one round, one batch per shard (a broadcast write joins every
 *       shard's batch); a batch is cut at 100,000 writes or 16 MiB, and the rest goes in the next round.</li>
 * </ul>
 */
final class WriteRouter {
    static final int MAX_WRITE_BATCH_SIZE = 100_000;
    static final int MAX_BSON_SIZE = 16 * 1024 * 1024;
    /** Per-write array overhead mongos adds to its size estimate (element type, index as text, terminator). */
    private static final int PER_ELEMENT_OVERHEAD = 7;
    /** (BSONObjMaxInternalSize - BSONObjMaxUserSize) / 100: mongos' estimate of an update/delete's own fields. */
    private static final int UPDATE_OVERHEAD = (16 * 1024) / 100;

    /** Sends one child command to one shard and returns its reply. */
    interface ShardChannel {
        /** Runs the child batches of one round concurrently and returns their replies in the same order. */
        List<Sent> sendAll(OperationContext operation, List<Send> sends);
    }

    record Send(String shard, String database, BsonDocument child, int writes) {}

    /**
     * A child batch's final reply and how many times it was sent: mongos' {@code AsyncRequestsSender} sends a
     * retryable write's batch again after a retryable error (see {@code MongosRouter}), each send one more
     * mongos-to-shard round trip.
     */
    record Sent(BsonDocument reply, int attempts) {}

    private final ShardingCatalog catalog;
    private final ShardChannel channel;
    private final RoutingStats stats;
    private final ShardLatency latency;

    WriteRouter(ShardingCatalog catalog, ShardChannel channel, RoutingStats stats, ShardLatency latency) {
        this.catalog = catalog;
        this.channel = channel;
        this.stats = stats;
        this.latency = latency;
    }

    BsonDocument route(OperationContext operation, BsonDocument command) {
        long startedNanos = System.nanoTime();
        String commandName = command.getFirstKey();
        String field = arrayField(commandName);
        String collection = command.getString(commandName).getValue();
        String namespace = operation.database() + "." + collection;
        List<BsonDocument> writes = new ArrayList<>();
        command.getArray(field, new BsonArray()).forEach(w -> writes.add(w.asDocument()));
        if (commandName.equals("insert")) {
            withIds(writes);
        }
        boolean ordered = command.getBoolean("ordered", BsonBoolean.TRUE).getValue();
        Optional<ChunkMap> map = catalog.chunkMap(namespace);

        // Target every write once; a write that cannot be targeted fails alone (mongos' target error).
        List<List<String>> targets = new ArrayList<>();
        Map<Integer, BsonDocument> targetErrors = new TreeMap<>();
        boolean[] twoPhase = new boolean[writes.size()];
        int[] sizes = new int[writes.size()];
        boolean[] done = new boolean[writes.size()];
        for (int i = 0; i < writes.size(); i++) {
            sizes[i] = estimatedSize(commandName, writes.get(i));
            targets.add(List.of());
        }
        targetPending(commandName, writes, done, map, targets, twoPhase, targetErrors);
        // Outside a transaction, mongos attaches the routing version it targeted with to each child batch of a
        // sharded collection; a shard that disagrees answers StaleConfig and the writes are targeted again.
        boolean versioned = map.isPresent() && !operation.command().containsKey("autocommit");
        long targetedVersion =
                versioned ? catalog.routing(namespace).orElseThrow().version() : 0;
        StaleConfigRetries staleRetries = new StaleConfigRetries(namespace);

        Reply reply = new Reply(commandName, ordered, writes.size(), catalog.version());
        List<ChildBatch> sent = new ArrayList<>();
        int round = 0;
        long modelledNanos = 0;
        boolean stop = false;
        while (!stop) {
            // -- build one round --
            int withoutShardKey = -1;
            Map<String, List<Integer>> batches = new LinkedHashMap<>();
            Map<String, Integer> bytes = new LinkedHashMap<>();
            for (int i = 0; i < writes.size(); i++) {
                if (done[i]) {
                    continue;
                }
                if (targetErrors.containsKey(i)) {
                    if (ordered && !batches.isEmpty()) {
                        break; // send what precedes it first; the error is reported in the next round
                    }
                    reply.writeErrors.put(i, targetErrors.get(i));
                    done[i] = true;
                    if (ordered) {
                        stop = true;
                        break;
                    }
                    continue;
                }
                List<String> shards = targets.get(i);
                if (twoPhase[i]) {
                    // "Writes without shard key should be in their own batch" (BatchWriteOp::targetBatch).
                    if (batches.isEmpty()) {
                        withoutShardKey = i;
                    }
                    break;
                }
                if (ordered && !batches.isEmpty() && !batches.keySet().containsAll(shards)) {
                    break;
                }
                if (wouldBeTooBig(shards, sizes[i], batches, bytes)) {
                    break;
                }
                for (String shard : shards) {
                    batches.computeIfAbsent(shard, s -> new ArrayList<>()).add(i);
                    bytes.merge(shard, sizes[i], Integer::sum);
                }
                done[i] = true;
                if (ordered && batches.size() > 1) {
                    break; // a multi-shard write is sent alone: later writes cannot be ordered across shards
                }
            }
            if (withoutShardKey >= 0) {
                round++;
                done[withoutShardKey] = true;
                int errorsBefore = reply.writeErrors.size();
                modelledNanos += writeWithoutShardKey(
                        operation,
                        command,
                        field,
                        writes,
                        withoutShardKey,
                        targets.get(withoutShardKey),
                        ordered,
                        round,
                        sent,
                        reply);
                if (ordered && reply.writeErrors.size() > errorsBefore) {
                    stop = true;
                }
                continue;
            }
            if (batches.isEmpty()) {
                break;
            }
            round++;

            // -- send it: the round ends when every reply is in --
            List<Send> sends = new ArrayList<>();
            long slowest = 0;
            for (Map.Entry<String, List<Integer>> batch : batches.entrySet()) {
                slowest = Math.max(
                        slowest,
                        latency.costNanos(batch.getKey(), batch.getValue().size()));
                BsonDocument child = child(operation, command, field, writes, batch.getValue(), ordered);
                if (versioned) {
                    child.put("shardVersion", new org.bson.BsonInt64(targetedVersion));
                }
                sends.add(new Send(
                        batch.getKey(),
                        operation.database(),
                        child,
                        batch.getValue().size()));
                sent.add(new ChildBatch(round, batch.getKey(), batch.getValue()));
            }
            modelledNanos += slowest;
            List<Sent> replies = channel.sendAll(operation, sends);

            // -- merge the replies into the client's indices --
            int errorsBefore = reply.writeErrors.size();
            int i = 0;
            boolean stale = false;
            for (Map.Entry<String, List<Integer>> batch : batches.entrySet()) {
                Sent answer = replies.get(i++);
                for (int retry = 1; retry < answer.attempts(); retry++) {
                    sent.add(new ChildBatch(round, batch.getKey(), batch.getValue()));
                }
                List<Integer> staleWrites = reply.merge(batch.getKey(), batch.getValue(), answer.reply());
                if (!staleWrites.isEmpty()) {
                    stale = true;
                    // Not applied: ready again. ORDERED, the shard stopped at the first, so the rest of the batch
                    // did not run either (batch_write_op.cpp noteBatchResponse, WriteOp::resetWriteToReady).
                    List<Integer> indices = batch.getValue();
                    int from = indices.indexOf(staleWrites.get(0));
                    for (int k = 0; k < indices.size(); k++) {
                        if (ordered ? k >= from : staleWrites.contains(indices.get(k))) {
                            done[indices.get(k)] = false;
                        }
                    }
                }
            }
            if (ordered && reply.writeErrors.size() > errorsBefore) {
                stop = true;
            }
            if (stale && !stop) {
                stats.staleWriteBatch();
                map = catalog.chunkMap(namespace);
                long refreshed = map.isPresent()
                        ? catalog.routing(namespace).orElseThrow().version()
                        : targetedVersion;
                if (staleRetries.noProgress(done, refreshed != targetedVersion)) {
                    staleRetries.abort(done, ordered, reply);
                    break;
                }
                targetedVersion = refreshed;
                targetPending(commandName, writes, done, map, targets, twoPhase, targetErrors);
            }
        }
        stats.add(new RoutedWrite(
                namespace,
                commandName,
                ordered,
                writes.size(),
                sent,
                java.time.Duration.ofNanos(modelledNanos),
                startedNanos,
                System.nanoTime()));
        return reply.toDocument();
    }

    /** (Re)targets every write not done yet with {@code map}; a write that cannot be targeted fails alone. */
    private void targetPending(
            String commandName,
            List<BsonDocument> writes,
            boolean[] done,
            Optional<ChunkMap> map,
            List<List<String>> targets,
            boolean[] twoPhase,
            Map<Integer, BsonDocument> targetErrors) {
        for (int i = 0; i < writes.size(); i++) {
            if (done[i]) {
                continue;
            }
            targetErrors.remove(i);
            try {
                Targeted targeted = map.isPresent()
                        ? target(commandName, writes.get(i), map.get())
                        : new Targeted(List.of(catalog.primaryShard()), false);
                targets.set(i, targeted.shards());
                twoPhase[i] = targeted.twoPhase();
            } catch (TargetException e) {
                targets.set(i, List.of());
                targetErrors.put(i, writeError(i, e.code, e.codeName, e.getMessage()));
            }
        }
    }

    static final int STALE_CONFIG = 13388;

    /**
     * mongos' bound on StaleConfig rounds ({@code BatchWriteExec::executeBatch}, mongodb/mongo
     * {@code src/mongo/s/write_ops/batch_write_exec.cpp}): after each round with a stale answer it refreshes its
     * routing and targets the ready writes again; a round that completes no write while the routing did not change is
     * a round without progress, and after more than {@code kMaxRoundsWithoutProgress} (5) of them the remaining writes
     * fail with {@code NoProgressMade} (82) ({@code abortBatch}: ORDERED, the first only).
     */
    private static final class StaleConfigRetries {
        static final int MAX_ROUNDS_WITHOUT_PROGRESS = 5;
        private final String namespace;
        private int completed = -1;
        private int roundsWithoutProgress;

        StaleConfigRetries(String namespace) {
            this.namespace = namespace;
        }

        boolean noProgress(boolean[] done, boolean routingChanged) {
            int now = 0;
            for (boolean d : done) {
                now += d ? 1 : 0;
            }
            roundsWithoutProgress = now == completed && !routingChanged ? roundsWithoutProgress + 1 : 0;
            completed = now;
            return roundsWithoutProgress > MAX_ROUNDS_WITHOUT_PROGRESS;
        }

        void abort(boolean[] done, boolean ordered, Reply reply) {
            for (int i = 0; i < done.length; i++) {
                if (!done[i]) {
                    done[i] = true;
                    reply.writeErrors.put(
                            i,
                            writeError(
                                    i,
                                    82,
                                    "NoProgressMade",
                                    "no progress was made executing batch write op in " + namespace + " after "
                                            + MAX_ROUNDS_WITHOUT_PROGRESS + " rounds"));
                    if (ordered) {
                        return;
                    }
                }
            }
        }
    }

    /**
     * mongos gives every document to insert that has no {@code _id} a new ObjectId, as its first field, before it
     * targets the insert (mongodb/mongo {@code src/mongo/s/commands/cluster_write_cmd.cpp} parses every insert through
     * {@code BatchedCommandRequest::cloneInsertWithIds}, {@code src/mongo/s/write_ops/batched_command_request.cpp}):
     * so on a collection sharded on {@code _id} the document goes to the shard that owns its {@code _id}, not to the
     * owner of a missing (null) key, and the shards never generate one.
     */
    private static void withIds(List<BsonDocument> documents) {
        for (int i = 0; i < documents.size(); i++) {
            BsonDocument document = documents.get(i);
            if (!document.containsKey("_id")) {
                BsonDocument withId = new BsonDocument("_id", new org.bson.BsonObjectId());
                withId.putAll(document);
                documents.set(i, withId);
            }
        }
    }

    // ---- targeting ------------------------------------------------------------------------------------

    /** Where one write goes; {@code twoPhase}: 7.0+'s write without shard key ({@link #writeWithoutShardKey}). */
    private record Targeted(List<String> shards, boolean twoPhase) {
        static Targeted to(List<String> shards) {
            return new Targeted(shards, false);
        }
    }

    /**
     * mongos' targeting of one write, {@code ChunkManagerTargeter::targetInsert/targetUpdate/targetDelete}
     * (mongodb/mongo 4.4 {@code src/mongo/s/chunk_manager_targeter.cpp}; 7.0+ {@code CollectionRoutingInfoTargeter}):
     * <ul>
     *   <li>an upsert needs the exact shard key in its filter: else {@code ShardKeyNotFound} (61) "Failed to target
     *       upsert by query :: could not extract exact shard key";</li>
     *   <li>otherwise a filter is sent to the shards owning chunks that match it ({@code _targetQuery},
     *       {@code getShardIdsForQuery}); an update or delete that reaches one shard is allowed whatever it is;</li>
     *   <li>a replacement reaching several shards is targeted by its replacement document's shard key;</li>
     *   <li>an {@code updateOne} reaching several shards without an exact {@code _id}: {@code InvalidOptions} (72)
     *       up to 6.0; a {@code deleteOne} without the shard key or an exact {@code _id}: {@code ShardKeyNotFound}
     *       (61) up to 6.0; from 7.0 both run as a write without shard key (two phases).</li>
     * </ul>
     */
    private Targeted target(String commandName, BsonDocument write, ChunkMap map) {
        ShardKey key = map.key();
        if (commandName.equals("insert")) {
            return Targeted.to(List.of(map.shardOf(key.pointOf(write))));
        }
        boolean withoutShardKeyProtocol = catalog.version().atLeast(ServerVersion.V7_0);
        BsonDocument filter = write.getDocument("q", new BsonDocument());
        Optional<BsonDocument> point = key.pointOfFilter(ChunkMap.flattenAnd(filter));
        if (commandName.equals("update")
                && write.getBoolean("upsert", BsonBoolean.FALSE).getValue()) {
            if (point.isEmpty()) {
                throw new TargetException(
                        61,
                        "ShardKeyNotFound",
                        "Failed to target upsert by query :: could not" + " extract exact shard key");
            }
            return Targeted.to(List.of(map.shardOf(point.get())));
        }
        if (point.isPresent()) {
            return Targeted.to(List.of(map.shardOf(point.get())));
        }
        boolean many = commandName.equals("update")
                ? write.getBoolean("multi", BsonBoolean.FALSE).getValue()
                : write.get("limit", new BsonInt32(0)).asNumber().intValue() == 0;
        if (commandName.equals("delete")) {
            if (!many && !isIdEquality(filter)) {
                if (withoutShardKeyProtocol) {
                    return twoPhaseOrSingle(map.shardsForFilter(filter, catalog.shards()));
                }
                throw new TargetException(
                        61,
                        "ShardKeyNotFound",
                        "A single delete on a sharded collection must contain"
                                + " an exact match on _id (and have the collection default collation) or contain the shard key"
                                + " (and have the simple collation). Delete request: " + write.toJson()
                                + ", shard key pattern: "
                                + key.pattern().toJson());
            }
            return Targeted.to(map.shardsForFilter(filter, catalog.shards()));
        }
        List<String> shards = map.shardsForFilter(filter, catalog.shards());
        if (shards.size() == 1 || many) {
            return Targeted.to(shards);
        }
        BsonValue update = write.get("u");
        boolean replacement = update != null
                && update.isDocument()
                && (update.asDocument().isEmpty()
                        || !update.asDocument().getFirstKey().startsWith("$"));
        if (replacement) {
            BsonDocument replacementDocument = update.asDocument().clone();
            if (!replacementDocument.containsKey("_id") && filter.containsKey("_id") && isIdEquality(filter)) {
                BsonValue id = filter.get("_id");
                replacementDocument.put(
                        "_id",
                        id.isDocument() && id.asDocument().containsKey("$eq")
                                ? id.asDocument().get("$eq")
                                : id);
            }
            return Targeted.to(List.of(map.shardOf(key.pointOf(replacementDocument))));
        }
        if (isIdEquality(filter)) {
            return Targeted.to(shards);
        }
        if (withoutShardKeyProtocol) {
            return twoPhaseOrSingle(shards);
        }
        throw new TargetException(
                72,
                "InvalidOptions",
                "A {multi:false} update on a sharded collection must either"
                        + " contain an exact match on _id or must target a single shard but this update targeted _id (and have"
                        + " the collection default collation) or must target a single shard (and have the simple collation), but"
                        + " this update targeted " + shards.size() + " shards. Update request: " + write.toJson()
                        + ", shard key pattern: " + key.pattern().toJson());
    }

    private static Targeted twoPhaseOrSingle(List<String> shards) {
        return new Targeted(shards, shards.size() > 1);
    }

    /**
     * 7.0+'s single update or delete without shard key or {@code _id} ({@code write_without_shard_key_util.cpp},
     * {@code cluster_query_without_shard_key_cmd.cpp}, {@code cluster_write_without_shard_key_cmd.cpp}): mongos first
     * asks the targeted shards for one matching document ({@code _clusterQueryWithoutShardKey}), then sends the write,
     * narrowed to that document's {@code _id}, to the shard that has it ({@code _clusterWriteWithoutShardKey}); when
     * no shard has a match, nothing is written. Each phase's sends are round trips of this round. Returns the modelled
     * time.
     */
    private long writeWithoutShardKey(
            OperationContext operation,
            BsonDocument command,
            String field,
            List<BsonDocument> writes,
            int index,
            List<String> shards,
            boolean ordered,
            int round,
            List<ChildBatch> sent,
            Reply reply) {
        BsonDocument write = writes.get(index);
        BsonDocument filter = write.getDocument("q", new BsonDocument());
        String collection = command.getString(command.getFirstKey()).getValue();
        List<Send> queries = new ArrayList<>();
        long slowest = 0;
        for (String shard : shards) {
            queries.add(new Send(
                    shard,
                    operation.database(),
                    new BsonDocument("find", new BsonString(collection))
                            .append("filter", filter)
                            .append("projection", new BsonDocument("_id", new BsonInt32(1)))
                            .append("limit", new BsonInt32(1))
                            .append("singleBatch", BsonBoolean.TRUE),
                    1));
            sent.add(new ChildBatch(round, shard, List.of(index)));
            slowest = Math.max(slowest, latency.costNanos(shard, 1));
        }
        List<Sent> found = channel.sendAll(operation, queries);
        String owner = null;
        BsonValue id = null;
        for (int i = 0; i < found.size() && owner == null; i++) {
            BsonDocument answer = found.get(i).reply();
            if (answer.get("ok", new BsonInt32(0)).asNumber().doubleValue() != 1) {
                reply.merge(shards.get(i), List.of(index), answer);
                return slowest;
            }
            BsonArray batch = answer.getDocument("cursor", new BsonDocument()).getArray("firstBatch", new BsonArray());
            if (!batch.isEmpty()) {
                owner = shards.get(i);
                id = batch.get(0).asDocument().get("_id");
            }
        }
        if (owner == null) {
            reply.merge(
                    shards.get(0),
                    List.of(index),
                    new BsonDocument("n", new BsonInt32(0))
                            .append("nModified", new BsonInt32(0))
                            .append("ok", new BsonDouble(1)));
            return slowest;
        }
        BsonDocument narrowed = write.clone();
        narrowed.put("q", new BsonDocument("$and", new BsonArray(List.of(filter, new BsonDocument("_id", id)))));
        List<BsonDocument> one = new ArrayList<>(writes);
        one.set(index, narrowed);
        Send writeSend = new Send(
                owner, operation.database(), child(operation, command, field, one, List.of(index), ordered), 1);
        sent.add(new ChildBatch(round, owner, List.of(index)));
        Sent answer = channel.sendAll(operation, List.of(writeSend)).get(0);
        for (int retry = 1; retry < answer.attempts(); retry++) {
            sent.add(new ChildBatch(round, owner, List.of(index)));
        }
        reply.merge(owner, List.of(index), answer.reply());
        return slowest + latency.costNanos(owner, 1);
    }

    private static boolean isIdEquality(BsonDocument filter) {
        BsonValue id = filter.get("_id");
        if (id == null || id.isArray() || id.isRegularExpression()) {
            return false;
        }
        return !id.isDocument()
                || id.asDocument().isEmpty()
                || !id.asDocument().getFirstKey().startsWith("$")
                || (id.asDocument().size() == 1 && id.asDocument().containsKey("$eq"));
    }

    private static boolean wouldBeTooBig(
            List<String> shards, int size, Map<String, List<Integer>> batches, Map<String, Integer> bytes) {
        for (String shard : shards) {
            List<Integer> batch = batches.get(shard);
            if (batch != null && (batch.size() >= MAX_WRITE_BATCH_SIZE || bytes.get(shard) + size > MAX_BSON_SIZE)) {
                return true;
            }
        }
        return false;
    }

    private static int estimatedSize(String commandName, BsonDocument write) {
        int size = Bson.encode(write).length + PER_ELEMENT_OVERHEAD;
        return commandName.equals("insert") ? size : size + UPDATE_OVERHEAD;
    }

    // ---- the child command -----------------------------------------------------------------------------

    /**
     * The child command for one shard: the client's writes at {@code indices}, the client's options, and the
     * session fields of the original command, with {@code stmtIds} holding each write's position in the client
     * command, so the shard can tell a resent statement from a new one.
     */
    private static BsonDocument child(
            OperationContext operation,
            BsonDocument command,
            String field,
            List<BsonDocument> writes,
            List<Integer> indices,
            boolean ordered) {
        BsonDocument original = operation.command();
        String commandName = command.getFirstKey();
        BsonDocument child = new BsonDocument(commandName, command.get(commandName));
        BsonArray items = new BsonArray();
        indices.forEach(i -> items.add(writes.get(i)));
        child.put(field, items);
        child.put("ordered", BsonBoolean.valueOf(ordered));
        for (Map.Entry<String, BsonValue> entry : command.entrySet()) {
            if (!entry.getKey().equals(commandName)
                    && !entry.getKey().equals(field)
                    && !entry.getKey().equals("ordered")) {
                child.put(entry.getKey(), entry.getValue());
            }
        }
        for (String session : List.of("lsid", "txnNumber", "writeConcern", "comment")) {
            if (original.containsKey(session)) {
                child.put(session, original.get(session));
            }
        }
        if (original.containsKey("txnNumber")) {
            BsonArray stmtIds = new BsonArray();
            // write_ops::getStmtIdForWriteAt (src/mongo/db/ops/write_ops_parsers.cpp), which
            // BatchWriteOp::buildBatchRequest (src/mongo/s/write_ops/batch_write_op.cpp) calls per child write: the
            // client's stmtIds[i], else its stmtId + i, else i.
            BsonArray given = original.containsKey("stmtIds") ? original.getArray("stmtIds") : null;
            int first =
                    original.isNumber("stmtId") ? original.getNumber("stmtId").intValue() : 0;
            indices.forEach(i -> stmtIds.add(given != null ? given.get(i) : new BsonInt32(first + i)));
            child.put("stmtIds", stmtIds);
        }
        return child;
    }

    private static String arrayField(String commandName) {
        switch (commandName) {
            case "insert":
                return "documents";
            case "update":
                return "updates";
            case "delete":
                return "deletes";
            default:
                throw new IllegalArgumentException("not a write command: " + commandName);
        }
    }

    private static BsonDocument writeError(int index, int code, String codeName, String message) {
        return new BsonDocument("index", new BsonInt32(index))
                .append("code", new BsonInt32(code))
                .append("codeName", new BsonString(codeName))
                .append("errmsg", new BsonString(message));
    }

    // ---- the merged reply -----------------------------------------------------------------------------

    /**
     * mongos' {@code BatchWriteOp}: counts summed, indices translated, write errors sorted by index
     * ({@code noteBatchResponse}, {@code noteBatchError}, {@code buildClientResponse} in mongodb/mongo
     * {@code src/mongo/s/write_ops/batch_write_op.cpp}).
     */
    private static final class Reply {
        final String commandName;
        final boolean ordered;
        final int writeCount;
        final ServerVersion version;
        long n;
        long nModified;
        final Map<Integer, BsonDocument> upserted = new TreeMap<>();
        final Map<Integer, BsonDocument> writeErrors = new TreeMap<>();
        final List<BsonDocument> writeConcernErrors = new ArrayList<>();
        final List<String> writeConcernErrorShards = new ArrayList<>();

        Reply(String commandName, boolean ordered, int writeCount, ServerVersion version) {
            this.commandName = commandName;
            this.ordered = ordered;
            this.writeCount = writeCount;
            this.version = version;
        }

        /** Merges one child batch's reply; returns the client indices answered with StaleConfig, in order. */
        List<Integer> merge(String shard, List<Integer> indices, BsonDocument child) {
            if (child.get("ok", new BsonInt32(0)).asNumber().doubleValue() != 1) {
                if (child.get("code", new BsonInt32(0)).asNumber().intValue() == STALE_CONFIG) {
                    return List.copyOf(indices);
                }
                // noteBatchResponse turns a failed child command into noteBatchError: ORDERED, one write error at
                // the batch's first write (the rest of the batch was not applied and is not reported); UNORDERED,
                // the error at every write of the batch.
                int code = child.get("code", new BsonInt32(8)).asNumber().intValue();
                String codeName = child.getString("codeName", new BsonString("UnknownError"))
                        .getValue();
                String message =
                        child.getString("errmsg", new BsonString(codeName)).getValue();
                for (int index : ordered ? indices.subList(0, 1) : indices) {
                    writeErrors.putIfAbsent(index, writeError(index, code, codeName, message));
                }
                return List.of();
            }
            List<Integer> stale = new ArrayList<>();
            n += child.get("n", new BsonInt32(0)).asNumber().longValue();
            nModified += child.get("nModified", new BsonInt32(0)).asNumber().longValue();
            child.getArray("upserted", new BsonArray()).forEach(value -> {
                BsonDocument upsert = value.asDocument().clone();
                int index = indices.get(upsert.getNumber("index").intValue());
                upsert.put("index", new BsonInt32(index));
                upserted.put(index, upsert);
            });
            child.getArray("writeErrors", new BsonArray()).forEach(value -> {
                BsonDocument error = value.asDocument().clone();
                int index = indices.get(error.getNumber("index").intValue());
                if (error.get("code", new BsonInt32(0)).asNumber().intValue() == STALE_CONFIG) {
                    stale.add(index);
                    return;
                }
                error.put("index", new BsonInt32(index));
                writeErrors.putIfAbsent(index, error);
            });
            if (child.containsKey("writeConcernError")) {
                writeConcernErrors.add(child.getDocument("writeConcernError"));
                writeConcernErrorShards.add(shard);
            }
            stale.sort(null);
            return stale;
        }

        BsonDocument toDocument() {
            BsonDocument reply = new BsonDocument("n", new BsonInt32((int) n));
            if (commandName.equals("update")) {
                reply.put("nModified", new BsonInt32((int) nModified));
            }
            if (!upserted.isEmpty()) {
                reply.put("upserted", new BsonArray(new ArrayList<>(upserted.values())));
            }
            if (!writeErrors.isEmpty()) {
                List<BsonDocument> errors = new ArrayList<>(writeErrors.values());
                errors.sort(Comparator.comparingInt(e -> e.getNumber("index").intValue()));
                reply.put("writeErrors", new BsonArray(errors));
            }
            BsonDocument writeConcernError = mergedWriteConcernError();
            if (writeConcernError != null) {
                reply.put("writeConcernError", writeConcernError);
            }
            reply.put("ok", new BsonDouble(1));
            return reply;
        }

        /**
         * {@code buildClientResponse}: up to 7.0 a write-concern error is reported only when no write failed, or the
         * bulk is unordered and some write succeeded ({@code reportWCError}); from 7.1 always
         * ({@code mergeWriteConcernErrors}). One error keeps its code, " at <shard>" appended; several become
         * {@code WriteConcernFailed} (64), "multiple errors reported : <error> at <shard> :: and :: ..." (8.0:
         * "Multiple errors reported :: ...").
         */
        private BsonDocument mergedWriteConcernError() {
            if (writeConcernErrors.isEmpty()) {
                return null;
            }
            boolean alwaysReported = version.atLeast(ServerVersion.V8_0);
            boolean report = alwaysReported || writeErrors.isEmpty() || (!ordered && writeErrors.size() < writeCount);
            if (!report) {
                return null;
            }
            if (writeConcernErrors.size() == 1) {
                BsonDocument only = writeConcernErrors.get(0).clone();
                only.put(
                        "errmsg",
                        new BsonString(only.getString("errmsg", new BsonString(""))
                                        .getValue() + " at " + writeConcernErrorShards.get(0)));
                return only;
            }
            StringBuilder message =
                    new StringBuilder(alwaysReported ? "Multiple errors reported :: " : "multiple errors reported : ");
            for (int i = 0; i < writeConcernErrors.size(); i++) {
                BsonDocument error = writeConcernErrors.get(i);
                if (i > 0) {
                    message.append(" :: and :: ");
                }
                message.append(error.getString(
                                        "codeName",
                                        new BsonString("Location"
                                                + error.get("code", new BsonInt32(8))
                                                        .asNumber()
                                                        .intValue()))
                                .getValue())
                        .append(": ")
                        .append(error.getString("errmsg", new BsonString("")).getValue())
                        .append(" at ")
                        .append(writeConcernErrorShards.get(i));
            }
            return new BsonDocument("code", new BsonInt32(64))
                    .append("codeName", new BsonString("WriteConcernFailed"))
                    .append("errmsg", new BsonString(message.toString()));
        }
    }

    private static final class TargetException extends RuntimeException {
        private static final long serialVersionUID = 1L;
        final int code;
        final String codeName;

        TargetException(int code, String codeName, String message) {
            super(message, null, false, false);
            this.code = code;
            this.codeName = codeName;
        }
    }

    static BsonDocument shardUnreachable(String shard) {
        return StorageEngine.error(6, "HostUnreachable", "connection to " + shard + " was closed");
    }
}
