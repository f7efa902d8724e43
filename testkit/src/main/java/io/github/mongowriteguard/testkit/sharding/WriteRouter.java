package io.github.mongowriteguard.testkit.sharding;

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

import io.github.mongowriteguard.testkit.engine.StorageEngine;
import io.github.mongowriteguard.testkit.node.OperationContext;
import io.github.mongowriteguard.testkit.wire.Bson;

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
        List<BsonDocument> sendAll(OperationContext operation, List<Send> sends);
    }

    record Send(String shard, String database, BsonDocument child, int writes) {
    }

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
        String commandName = command.getFirstKey();
        String field = arrayField(commandName);
        String collection = command.getString(commandName).getValue();
        String namespace = operation.database() + "." + collection;
        List<BsonDocument> writes = new ArrayList<>();
        command.getArray(field, new BsonArray()).forEach(w -> writes.add(w.asDocument()));
        boolean ordered = command.getBoolean("ordered", BsonBoolean.TRUE).getValue();
        Optional<ChunkMap> map = catalog.chunkMap(namespace);

        // Target every write once; a write that cannot be targeted fails alone (mongos' target error).
        List<List<String>> targets = new ArrayList<>();
        Map<Integer, BsonDocument> targetErrors = new TreeMap<>();
        int[] sizes = new int[writes.size()];
        for (int i = 0; i < writes.size(); i++) {
            sizes[i] = estimatedSize(commandName, writes.get(i));
            try {
                targets.add(map.isPresent() ? target(commandName, writes.get(i), map.get()) : List.of(catalog.primaryShard()));
            } catch (TargetException e) {
                targets.add(List.of());
                targetErrors.put(i, writeError(i, e.code, e.codeName, e.getMessage()));
            }
        }

        Reply reply = new Reply(commandName);
        List<ChildBatch> sent = new ArrayList<>();
        boolean[] done = new boolean[writes.size()];
        int round = 0;
        long modelledNanos = 0;
        boolean stop = false;
        while (!stop) {
            // -- build one round --
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
            if (batches.isEmpty()) {
                break;
            }
            round++;

            // -- send it: the round ends when every reply is in --
            List<Send> sends = new ArrayList<>();
            long slowest = 0;
            for (Map.Entry<String, List<Integer>> batch : batches.entrySet()) {
                slowest = Math.max(slowest, latency.costNanos(batch.getKey(), batch.getValue().size()));
                sends.add(new Send(batch.getKey(), operation.database(),
                    child(operation, command, field, writes, batch.getValue(), ordered), batch.getValue().size()));
                sent.add(new ChildBatch(round, batch.getKey(), batch.getValue()));
            }
            modelledNanos += slowest;
            List<BsonDocument> replies = channel.sendAll(operation, sends);

            // -- merge the replies into the client's indices --
            int errorsBefore = reply.writeErrors.size();
            int i = 0;
            for (Map.Entry<String, List<Integer>> batch : batches.entrySet()) {
                reply.merge(batch.getValue(), replies.get(i++));
            }
            if (ordered && reply.writeErrors.size() > errorsBefore) {
                stop = true;
            }
        }
        stats.add(new RoutedWrite(namespace, commandName, ordered, writes.size(), sent,
            java.time.Duration.ofNanos(modelledNanos)));
        return reply.toDocument();
    }

    // ---- targeting ------------------------------------------------------------------------------------

    private List<String> target(String commandName, BsonDocument write, ChunkMap map) {
        ShardKey key = map.key();
        if (commandName.equals("insert")) {
            return List.of(map.shardOf(key.pointOf(write)));
        }
        BsonDocument filter = write.getDocument("q", new BsonDocument());
        Optional<BsonDocument> point = key.pointOfFilter(filter);
        if (point.isPresent()) {
            return List.of(map.shardOf(point.get()));
        }
        boolean many = commandName.equals("update")
            ? write.getBoolean("multi", BsonBoolean.FALSE).getValue()
            : write.get("limit", new BsonInt32(0)).asNumber().intValue() == 0;
        if (commandName.equals("update") && write.getBoolean("upsert", BsonBoolean.FALSE).getValue()) {
            throw new TargetException(61, "ShardKeyNotFound", "Failed to target upsert by query :: could not extract"
                + " exact shard key from the query " + filter.toJson() + " for shard key " + key);
        }
        if (many || isIdEquality(filter)) {
            return catalog.shards();
        }
        throw new TargetException(72, "InvalidOptions", commandName.equals("update")
            ? "A {multi:false} update on a sharded collection must contain an exact match on _id (and have the"
                + " collection default collation) or contain the shard key " + key
            : "A single delete on a sharded collection must contain an exact match on _id (and have the collection"
                + " default collation) or contain the shard key " + key);
    }

    private static boolean isIdEquality(BsonDocument filter) {
        BsonValue id = filter.get("_id");
        if (id == null || id.isArray() || id.isRegularExpression()) {
            return false;
        }
        return !id.isDocument() || id.asDocument().isEmpty() || !id.asDocument().getFirstKey().startsWith("$")
            || (id.asDocument().size() == 1 && id.asDocument().containsKey("$eq"));
    }

    private static boolean wouldBeTooBig(List<String> shards, int size, Map<String, List<Integer>> batches,
                                         Map<String, Integer> bytes) {
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
    private static BsonDocument child(OperationContext operation, BsonDocument command, String field,
                                      List<BsonDocument> writes, List<Integer> indices, boolean ordered) {
        BsonDocument original = operation.command();
        String commandName = command.getFirstKey();
        BsonDocument child = new BsonDocument(commandName, command.get(commandName));
        BsonArray items = new BsonArray();
        indices.forEach(i -> items.add(writes.get(i)));
        child.put(field, items);
        child.put("ordered", BsonBoolean.valueOf(ordered));
        for (Map.Entry<String, BsonValue> entry : command.entrySet()) {
            if (!entry.getKey().equals(commandName) && !entry.getKey().equals(field) && !entry.getKey().equals("ordered")) {
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
            BsonArray given = original.containsKey("stmtIds") ? original.getArray("stmtIds") : null;
            indices.forEach(i -> stmtIds.add(given != null ? given.get(i) : new BsonInt32(i)));
            child.put("stmtIds", stmtIds);
        }
        if (original.containsKey("maxTimeMS")) {
            long maxTimeMs = original.get("maxTimeMS").asNumber().longValue();
            if (maxTimeMs > 0) {
                long elapsedMs = (System.nanoTime() - operation.startNanos()) / 1_000_000;
                child.put("maxTimeMS", new BsonInt32((int) Math.max(1, maxTimeMs - elapsedMs)));
            }
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
        return new BsonDocument("index", new BsonInt32(index)).append("code", new BsonInt32(code))
            .append("codeName", new BsonString(codeName)).append("errmsg", new BsonString(message));
    }

    // ---- the merged reply -----------------------------------------------------------------------------

    /** mongos' BatchWriteOp result: counts summed, indices translated, write errors sorted by index. */
    private static final class Reply {
        final String commandName;
        long n;
        long nModified;
        final Map<Integer, BsonDocument> upserted = new TreeMap<>();
        final Map<Integer, BsonDocument> writeErrors = new TreeMap<>();
        final List<BsonDocument> writeConcernErrors = new ArrayList<>();

        Reply(String commandName) {
            this.commandName = commandName;
        }

        void merge(List<Integer> indices, BsonDocument child) {
            if (child.get("ok", new BsonInt32(0)).asNumber().doubleValue() != 1) {
                // A failed child command fails each of its writes (the client sees write errors, as from mongos).
                int code = child.get("code", new BsonInt32(8)).asNumber().intValue();
                String codeName = child.getString("codeName", new BsonString("UnknownError")).getValue();
                String message = child.getString("errmsg", new BsonString(codeName)).getValue();
                for (int index : indices) {
                    writeErrors.putIfAbsent(index, writeError(index, code, codeName, message));
                }
                return;
            }
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
                error.put("index", new BsonInt32(index));
                writeErrors.putIfAbsent(index, error);
            });
            if (child.containsKey("writeConcernError")) {
                writeConcernErrors.add(child.getDocument("writeConcernError"));
            }
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
            if (writeConcernErrors.size() == 1) {
                reply.put("writeConcernError", writeConcernErrors.get(0));
            } else if (writeConcernErrors.size() > 1) {
                // mongos reports one write-concern error: the first code, every shard's message.
                BsonDocument first = writeConcernErrors.get(0).clone();
                StringBuilder message = new StringBuilder("multiple errors reported :");
                writeConcernErrors.forEach(e -> message.append(' ').append(e.getString("errmsg", new BsonString("")).getValue()));
                first.put("errmsg", new BsonString(message.toString()));
                reply.put("writeConcernError", first);
            }
            reply.put("ok", new BsonDouble(1));
            return reply;
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
