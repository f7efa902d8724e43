package io.github.mongowriteguard.testkit.node;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.function.Function;
import java.util.function.UnaryOperator;
import org.bson.BsonArray;
import org.bson.BsonBoolean;
import org.bson.BsonDocument;
import org.bson.BsonDouble;
import org.bson.BsonInt32;
import org.bson.BsonValue;

/**
 * The statements of one retryable write and their statement ids, as mongod's transaction table tracks them: a
 * statement whose id already ran under the session's current {@code txnNumber} is not run again, its recorded
 * result is reported instead. The ids are {@code stmtIds} when the command carries them (mongos sends each
 * write's position in the client's command) and else the positions 0..n-1 (what a driver's command means).
 *
 * <p>This is what makes a driver resend through mongos a no-op on the shards, and lets mongos send several
 * rounds of one client command, with one {@code txnNumber}, to the same shard.
 */
final class RetryableStatements {
    /** The reply to the command and the documents written by statements that ran now (not the replayed ones). */
    record Result(BsonDocument reply, long applied) {}

    /** Asked before each statement that has not run yet; an error reply fails it and stops the command. */
    interface Gate {
        /** @return null to run the statement, or the error ({@code code}, {@code codeName}, {@code errmsg}) it fails with */
        BsonDocument beforeStatement();
    }

    /** Told of every statement recorded as executed (the replication layer logs it with the statement's effects). */
    interface Recorder {
        void recorded(int stmtId, BsonDocument outcome);
    }

    private final String commandName;
    private final String field;
    private Recorder recorder = (stmtId, outcome) -> {};
    private final List<BsonValue> items;
    private final List<Integer> stmtIds;
    private final boolean ordered;

    private RetryableStatements(BsonDocument command) {
        this.commandName = command.getFirstKey();
        this.field = switch (commandName) {
            case "insert" -> "documents";
            case "update" -> "updates";
            case "delete" -> "deletes";
            default -> null; // findAndModify: one statement
        };
        this.items = field == null ? List.of(command) : new ArrayList<>(command.getArray(field, new BsonArray()));
        this.ordered = command.getBoolean("ordered", BsonBoolean.TRUE).getValue();
        List<Integer> ids = new ArrayList<>();
        BsonArray given = command.isArray("stmtIds") ? command.getArray("stmtIds") : null;
        int base = command.isNumber("stmtId") ? command.getNumber("stmtId").intValue() : 0;
        for (int i = 0; i < items.size(); i++) {
            ids.add(given != null && i < given.size() ? given.get(i).asNumber().intValue() : base + i);
        }
        this.stmtIds = ids;
    }

    static RetryableStatements of(BsonDocument command) {
        return new RetryableStatements(command);
    }

    /** The statement ids, one per item. */
    List<Integer> stmtIds() {
        return stmtIds;
    }

    /** The statements ({@code documents}, {@code updates} or {@code deletes} items; the command for findAndModify). */
    List<BsonValue> items() {
        return items;
    }

    /** Reports each statement recorded as executed to {@code listener}. */
    RetryableStatements recordingTo(Recorder listener) {
        this.recorder = listener;
        return this;
    }

    /**
     * Whether an update or delete statement wrote: one that matched nothing (no upsert) writes no oplog entry, nor
     * does an update that matched a document it left as it was ({@code OpObserverImpl::onUpdate} in mongodb/mongo
     * {@code src/mongo/db/op_observer/op_observer_impl.cpp}: "Do not log a no-op operation", an empty update is not
     * logged); and mongod records a statement as executed only with the oplog entry of its write
     * ({@code TransactionParticipant::onWriteOpCompletedOnPrimary}, called by the op observer with the entry's
     * {@code stmtIds}; a retry's result is rebuilt from that entry, {@code src/mongo/db/ops/write_ops_retryability.cpp}).
     * So a resend of it runs again (and may now match, or change something).
     */
    private boolean wroteSomething(BsonDocument outcome) {
        return switch (commandName) {
            case "update" -> outcome.getNumber("nModified").longValue() > 0 || outcome.containsKey("upsertedId");
            case "delete" -> outcome.getNumber("n").longValue() > 0;
            default -> true;
        };
    }

    private void record(Map<Integer, BsonDocument> executed, int stmtId, BsonDocument outcome) {
        executed.put(stmtId, outcome);
        recorder.recorded(stmtId, outcome);
    }

    boolean allExecuted(Map<Integer, BsonDocument> executed) {
        return !stmtIds.isEmpty() && executed.keySet().containsAll(stmtIds);
    }

    /**
     * Runs the statements that have not run yet, one command each, and builds the reply of the whole command.
     *
     * @param runner runs a single-statement command built by the given function from the stripped command; null
     *               when every statement already ran
     */
    Result run(Map<Integer, BsonDocument> executed, Function<UnaryOperator<BsonDocument>, BsonDocument> runner) {
        return run(executed, runner, null);
    }

    /** As {@link #run(Map, Function)}, asking {@code gate} (may be null) before each statement that runs now. */
    Result run(
            Map<Integer, BsonDocument> executed,
            Function<UnaryOperator<BsonDocument>, BsonDocument> runner,
            Gate gate) {
        if (field == null) {
            BsonDocument stored = executed.get(stmtIds.get(0));
            if (stored != null) {
                return new Result(stored.clone(), 0);
            }
            BsonDocument refused = gate == null ? null : gate.beforeStatement();
            if (refused != null) {
                return new Result(refused, 0);
            }
            BsonDocument reply = runner.apply(UnaryOperator.identity());
            if (isOk(reply)) {
                record(executed, stmtIds.get(0), reply.clone());
            }
            return new Result(reply, EmulatedNode.applied(commandName, reply));
        }
        if (gate == null && commandName.equals("insert") && stmtIds.stream().noneMatch(executed::containsKey)) {
            return insertWhole(executed, runner);
        }
        long n = 0;
        long nModified = 0;
        long applied = 0;
        BsonArray upserted = new BsonArray();
        BsonArray writeErrors = new BsonArray();
        BsonDocument writeConcernError = null;
        for (int i = 0; i < items.size(); i++) {
            BsonDocument outcome = executed.get(stmtIds.get(i));
            if (outcome == null) {
                BsonDocument refused = gate == null ? null : gate.beforeStatement();
                if (refused != null) {
                    // The failed statement and those after it are not applied, whatever the ordering.
                    writeErrors.add(new BsonDocument("index", new BsonInt32(i))
                            .append("code", refused.get("code"))
                            .append("codeName", refused.get("codeName"))
                            .append("errmsg", refused.get("errmsg")));
                    break;
                }
                BsonValue item = items.get(i);
                BsonDocument reply = runner.apply(stripped -> {
                    // A shallow copy with a one-statement array: cloning the whole batch per statement is quadratic.
                    BsonDocument single = new BsonDocument();
                    stripped.forEach((name, value) ->
                            single.put(name, name.equals(field) ? new BsonArray(List.of(item)) : value));
                    return single;
                });
                if (!isOk(reply)) {
                    return new Result(reply, applied);
                }
                if (reply.containsKey("writeConcernError")) {
                    writeConcernError = reply.getDocument("writeConcernError");
                }
                BsonArray errors = reply.getArray("writeErrors", new BsonArray());
                if (!errors.isEmpty()) {
                    // A failed statement is not recorded: a retry runs it again, as on mongod.
                    BsonDocument error = errors.get(0).asDocument().clone();
                    error.put("index", new BsonInt32(i));
                    writeErrors.add(error);
                    if (isStaleRouting(error)) {
                        // handleError in write_ops_exec.cpp: a routing error stops the command, "all subsequent
                        // operations will fail with the same cause"; the reply repeats it for every later statement
                        // of an unordered command.
                        for (int later = i + 1; !ordered && later < items.size(); later++) {
                            BsonDocument repeated = error.clone();
                            repeated.put("index", new BsonInt32(later));
                            writeErrors.add(repeated);
                        }
                        break;
                    }
                    if (ordered) {
                        break;
                    }
                    continue;
                }
                outcome = new BsonDocument("n", reply.get("n", new BsonInt32(0)))
                        .append("nModified", reply.get("nModified", new BsonInt32(0)));
                BsonArray upserts = reply.getArray("upserted", new BsonArray());
                if (!upserts.isEmpty()) {
                    outcome.put("upsertedId", upserts.get(0).asDocument().get("_id"));
                }
                if (wroteSomething(outcome)) {
                    record(executed, stmtIds.get(i), outcome);
                }
                applied += EmulatedNode.applied(commandName, reply);
            }
            n += outcome.getNumber("n").longValue();
            nModified += outcome.getNumber("nModified").longValue();
            if (outcome.containsKey("upsertedId")) {
                upserted.add(new BsonDocument("index", new BsonInt32(i)).append("_id", outcome.get("upsertedId")));
            }
        }
        BsonDocument reply = new BsonDocument("n", new BsonInt32((int) n));
        if (commandName.equals("update")) {
            reply.put("nModified", new BsonInt32((int) nModified));
            if (!upserted.isEmpty()) {
                reply.put("upserted", upserted);
            }
        }
        if (!writeErrors.isEmpty()) {
            reply.put("writeErrors", writeErrors);
        }
        if (writeConcernError != null) {
            reply.put("writeConcernError", writeConcernError);
        }
        reply.put("ok", new BsonDouble(1));
        return new Result(reply, applied);
    }

    /**
     * mongod's {@code internalInsertMaxBatchSize} on 4.4 (64: half of {@code internalQueryExecYieldIterations}, 128;
     * mongodb/mongo {@code src/mongo/db/query/query_knobs.idl}, {@code getParameter} of a 4.4 server).
     */
    static final int INSERT_MAX_BATCH_SIZE = 64;

    /** {@code write_ops::insertVectorMaxBytes}: a group closes once it holds this many bytes of documents. */
    static final int INSERT_MAX_BATCH_BYTES = 256 * 1024;

    /**
     * The common case, a first send of an insert, as mongod's {@code performInserts} runs it (mongodb/mongo
     * {@code src/mongo/db/ops/write_ops_exec.cpp}): the documents in groups of up to {@link #INSERT_MAX_BATCH_SIZE}
     * (or until a group holds {@link #INSERT_MAX_BATCH_BYTES}), one engine call per group; each group after the first
     * starts at an interrupt point ({@code insertBatchAndHandleErrors} takes the collection lock again), so a kill or
     * the deadline there fails the command with the groups before it applied and recorded. Every document that did
     * not fail is recorded as one inserted statement (ordered: only those before the first error ran).
     */
    private Result insertWhole(
            Map<Integer, BsonDocument> executed, Function<UnaryOperator<BsonDocument>, BsonDocument> runner) {
        BsonDocument inserted = new BsonDocument("n", new BsonInt32(1)).append("nModified", new BsonInt32(0));
        BsonArray writeErrors = new BsonArray();
        BsonDocument writeConcernError = null;
        int n = 0;
        for (int from = 0; from < items.size(); ) {
            int to = groupEnd(from);
            boolean whole = from == 0 && to == items.size();
            List<BsonValue> group = items.subList(from, to);
            BsonDocument reply = runner.apply(
                    whole
                            ? UnaryOperator.identity()
                            : stripped -> {
                                BsonDocument part = new BsonDocument();
                                stripped.forEach((name, value) -> part.put(
                                        name, name.equals(field) ? new BsonArray(new ArrayList<>(group)) : value));
                                return part;
                            });
            if (!isOk(reply)) {
                return new Result(reply, n);
            }
            java.util.Set<Integer> failed = new java.util.HashSet<>();
            for (BsonValue value : reply.getArray("writeErrors", new BsonArray())) {
                BsonDocument error = value.asDocument().clone();
                failed.add(error.getNumber("index").intValue());
                error.put("index", new BsonInt32(from + error.getNumber("index").intValue()));
                writeErrors.add(error);
            }
            int end = ordered && !failed.isEmpty() ? java.util.Collections.min(failed) : group.size();
            for (int i = 0; i < end; i++) {
                if (!failed.contains(i)) {
                    record(executed, stmtIds.get(from + i), inserted);
                    n++;
                }
            }
            if (whole) {
                // The engine counts a document that failed with a write error in n; mongod does not.
                reply.put("n", new BsonInt32(n));
                return new Result(reply, n);
            }
            if (reply.containsKey("writeConcernError")) {
                writeConcernError = reply.getDocument("writeConcernError");
            }
            from = ordered && !failed.isEmpty() ? items.size() : to;
        }
        BsonDocument reply = new BsonDocument("n", new BsonInt32(n));
        if (!writeErrors.isEmpty()) {
            reply.put("writeErrors", writeErrors);
        }
        if (writeConcernError != null) {
            reply.put("writeConcernError", writeConcernError);
        }
        reply.put("ok", new BsonDouble(1));
        return new Result(reply, n);
    }

    /** Where the insert group starting at {@code from} ends (exclusive), as {@code performInserts} fills it. */
    private int groupEnd(int from) {
        if (items.size() - from == 1) {
            return items.size();
        }
        int bytes = 0;
        int i = from;
        while (i < items.size()) {
            BsonValue item = items.get(i++);
            bytes += item.isDocument()
                    ? io.github.mongowriteguard.testkit.wire.Bson.encode(item.asDocument()).length
                    : 0;
            if (i - from >= INSERT_MAX_BATCH_SIZE || bytes >= INSERT_MAX_BATCH_BYTES) {
                break;
            }
        }
        return i;
    }

    /** The {@code StaleShardVersionError} category: StaleShardVersion (63), StaleEpoch (150), StaleConfig (13388). */
    private static boolean isStaleRouting(BsonDocument error) {
        int code = error.get("code", new BsonInt32(0)).asNumber().intValue();
        return code == 63 || code == 150 || code == 13388;
    }

    private static boolean isOk(BsonDocument reply) {
        return reply.get("ok", new BsonInt32(0)).asNumber().doubleValue() == 1;
    }
}
