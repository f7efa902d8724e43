package io.github.mongowriteguard.testkit.node;

import io.github.mongowriteguard.testkit.engine.StorageEngine;
import io.github.mongowriteguard.testkit.server.ServerVersion;
import java.util.List;
import java.util.Set;
import java.util.function.BiFunction;
import org.bson.BsonArray;
import org.bson.BsonBoolean;
import org.bson.BsonDocument;
import org.bson.BsonDouble;
import org.bson.BsonInt32;
import org.bson.BsonInt64;
import org.bson.BsonString;
import org.bson.BsonValue;

/**
 * Server 8.0's {@code bulkWrite} admin command (several namespaces in one command), on a mongod and on a mongos.
 * Each op runs as the single-statement {@code insert}/{@code update}/{@code delete} command the node already
 * serves, with the command's session, {@code txnNumber} and the op's statement id ({@code stmtIds[i]}, else
 * {@code stmtId + i}, else {@code i}), so retries and mongos routing work per op as for the collection commands.
 *
 * <p>Request and reply as in mongodb/mongo {@code src/mongo/db/commands/query_cmd/bulk_write.idl} (8.0):
 * {@code ops} of {@code {insert: nsIndex, document}}, {@code {update: nsIndex, filter, updateMods, multi, upsert,
 * arrayFilters, collation, hint, sort}}, {@code {delete: nsIndex, filter, multi, collation, hint}};
 * {@code nsInfo: [{ns}]}, {@code ordered}, {@code errorsOnly}, {@code bypassDocumentValidation}, {@code let};
 * the reply a cursor (id 0) of per-op items {@code {ok, idx, code, errmsg, <error extra info>, n, nModified,
 * upserted: {_id}}} ({@code BulkWriteReplyItem::serialize}, {@code query_cmd/bulk_write_parser.cpp}), only the
 * errors when {@code errorsOnly}, and {@code nErrors}, {@code nInserted}, {@code nMatched}, {@code nModified},
 * {@code nUpserted}, {@code nDeleted} (an upserting update counts in {@code nUpserted}, not {@code nMatched}, as the
 * driver's result reports it). An ordered command stops after its first failed op. A command-level error of an op
 * (interruption, deadline) fails the whole command. Inside a transaction a failed op is an error item of an
 * {@code ok: 1} reply and stops the command, ordered or not, and the transaction is aborted; a transient transaction
 * error fails the whole command ({@code handleDeleteOp}/{@code handleUpdateOp} in
 * {@code src/mongo/db/commands/query_cmd/bulk_write.cpp} call {@code addErrorReply} and then
 * {@code write_ops_exec::handleError}, {@code src/mongo/db/ops/write_ops_exec.cpp}). Below 8.0 the command does not exist: {@code CommandNotFound}
 * (59), {@code no such command: 'bulkWrite'} (in 7.0 it is registered only behind {@code featureFlagBulkWriteCommand};
 * not yet checked against the 7.0 sources).
 */
final class BulkWriteCommand {
    /** Fields of the command passed on to each op's command. */
    private static final List<String> PASSED_ON = List.of(
            "lsid", "txnNumber", "maxTimeMS", "writeConcern", "comment", "bypassDocumentValidation", "$clusterTime");

    private static final Set<String> ERROR_FIELDS_NOT_EXTRA = Set.of("index", "code", "codeName", "errmsg");

    private BulkWriteCommand() {}

    static boolean isBulkWrite(BsonDocument command) {
        return command.getFirstKey().equals("bulkWrite");
    }

    /**
     * @param runOp runs one op's command (database, full command with session fields) on this node and returns
     *              its reply
     */
    static BsonDocument run(
            ServerVersion version,
            String database,
            BsonDocument command,
            BiFunction<String, BsonDocument, BsonDocument> runOp) {
        if (!version.atLeast(ServerVersion.V8_0)) {
            return StorageEngine.error(59, "CommandNotFound", "no such command: 'bulkWrite'");
        }
        if (!database.equals("admin")) {
            return StorageEngine.error(13, "Unauthorized", "bulkWrite may only be run against the admin database.");
        }
        BsonArray ops = command.getArray("ops", new BsonArray());
        BsonArray nsInfo = command.getArray("nsInfo", new BsonArray());
        boolean ordered = command.getBoolean("ordered", BsonBoolean.TRUE).getValue();
        boolean errorsOnly = command.getBoolean("errorsOnly", BsonBoolean.FALSE).getValue();
        // In a transaction a write error stops the batch, ordered or not (write_ops_exec.cpp handleError: "If we are
        // in a transaction, we must fail the whole batch"), and aborts the transaction.
        boolean inTransaction = command.containsKey("autocommit");
        BsonArray stmtIds = command.isArray("stmtIds") ? command.getArray("stmtIds") : null;
        int stmtIdBase =
                command.isNumber("stmtId") ? command.getNumber("stmtId").intValue() : 0;
        BsonArray items = new BsonArray();
        int nErrors = 0;
        long nInserted = 0;
        long nMatched = 0;
        long nModified = 0;
        long nUpserted = 0;
        long nDeleted = 0;
        BsonDocument writeConcernError = null;
        for (int idx = 0; idx < ops.size(); idx++) {
            BsonDocument op = ops.get(idx).asDocument();
            String kind = op.getFirstKey();
            int nsIndex = op.getNumber(kind).intValue();
            if (nsIndex < 0 || nsIndex >= nsInfo.size()) {
                return StorageEngine.error(
                        2,
                        "BadValue",
                        "BulkWrite " + kind + " op nsInfo index " + nsIndex + " is out of range for nsInfo of size "
                                + nsInfo.size());
            }
            String ns = nsInfo.get(nsIndex).asDocument().getString("ns").getValue();
            int dot = ns.indexOf('.');
            String opDatabase = ns.substring(0, dot);
            String collection = ns.substring(dot + 1);
            BsonDocument opCommand = opCommand(kind, collection, op, command);
            if (command.containsKey("autocommit")) {
                // On a mongos, a transaction's bulkWrite: each op is a statement of the transaction, the first one
                // starting it (a mongod runs a transaction's bulkWrite in its Transactions instead).
                opCommand.put("autocommit", command.get("autocommit"));
                if (idx == 0) {
                    copy(command, opCommand, "startTransaction", "readConcern");
                }
            }
            opCommand.put(
                    "stmtIds",
                    new BsonArray(List.of(
                            stmtIds != null && idx < stmtIds.size()
                                    ? stmtIds.get(idx)
                                    : new BsonInt32(stmtIdBase + idx))));
            BsonDocument reply = runOp.apply(opDatabase, opCommand);
            if (reply.get("ok", new BsonInt32(0)).asNumber().doubleValue() != 1) {
                return reply;
            }
            if (reply.containsKey("writeConcernError")) {
                writeConcernError = reply.getDocument("writeConcernError");
            }
            BsonArray writeErrors = reply.getArray("writeErrors", new BsonArray());
            BsonDocument item = new BsonDocument("ok", new BsonDouble(writeErrors.isEmpty() ? 1 : 0))
                    .append("idx", new BsonInt32(idx));
            if (!writeErrors.isEmpty()) {
                BsonDocument error = writeErrors.get(0).asDocument();
                item.append("code", new BsonInt32(error.getNumber("code").intValue()))
                        .append("errmsg", error.get("errmsg", new BsonString("")));
                error.forEach((name, value) -> {
                    if (!ERROR_FIELDS_NOT_EXTRA.contains(name)) {
                        item.append(name, value);
                    }
                });
                item.append("n", new BsonInt32(0));
                nErrors++;
                items.add(item);
                if (ordered || inTransaction) {
                    break;
                }
                continue;
            }
            int n = reply.get("n", new BsonInt32(0)).asNumber().intValue();
            item.append("n", new BsonInt32(n));
            switch (kind) {
                case "insert" -> nInserted += n;
                case "delete" -> nDeleted += n;
                default -> {
                    int modified =
                            reply.get("nModified", new BsonInt32(0)).asNumber().intValue();
                    item.append("nModified", new BsonInt32(modified));
                    nModified += modified;
                    BsonArray upserted = reply.getArray("upserted", new BsonArray());
                    if (upserted.isEmpty()) {
                        nMatched += n;
                    } else {
                        nUpserted++;
                        item.append(
                                "upserted",
                                new BsonDocument(
                                        "_id", upserted.get(0).asDocument().get("_id")));
                    }
                }
            }
            if (!errorsOnly) {
                items.add(item);
            }
        }
        BsonDocument result = new BsonDocument(
                        "cursor",
                        new BsonDocument("id", new BsonInt64(0))
                                .append("firstBatch", items)
                                .append("ns", new BsonString("admin.$cmd.bulkWrite")))
                .append("nErrors", new BsonInt32(nErrors))
                .append("nInserted", new BsonInt32((int) nInserted))
                .append("nMatched", new BsonInt32((int) nMatched))
                .append("nModified", new BsonInt32((int) nModified))
                .append("nUpserted", new BsonInt32((int) nUpserted))
                .append("nDeleted", new BsonInt32((int) nDeleted));
        if (writeConcernError != null) {
            result.append("writeConcernError", writeConcernError);
        }
        result.append("ok", new BsonDouble(1));
        return result;
    }

    /** What the op means as the collection command the node serves: one statement, ordered. */
    private static BsonDocument opCommand(String kind, String collection, BsonDocument op, BsonDocument command) {
        BsonDocument opCommand = new BsonDocument(kind, new BsonString(collection));
        switch (kind) {
            case "insert" -> opCommand.append("documents", new BsonArray(List.of(op.getDocument("document"))));
            case "update" -> {
                BsonDocument statement =
                        new BsonDocument("q", op.getDocument("filter")).append("u", op.get("updateMods"));
                copy(op, statement, "multi", "upsert", "arrayFilters", "collation", "hint", "sort");
                opCommand.append("updates", new BsonArray(List.of(statement)));
            }
            case "delete" -> {
                BsonDocument statement = new BsonDocument("q", op.getDocument("filter"))
                        .append(
                                "limit",
                                new BsonInt32(
                                        op.getBoolean("multi", BsonBoolean.FALSE)
                                                        .getValue()
                                                ? 0
                                                : 1));
                copy(op, statement, "collation", "hint");
                opCommand.append("deletes", new BsonArray(List.of(statement)));
            }
            default -> throw new IllegalArgumentException("unknown bulkWrite op " + op.toJson());
        }
        opCommand.append("ordered", BsonBoolean.TRUE);
        if (!kind.equals("insert") && command.containsKey("let")) {
            opCommand.append("let", command.get("let"));
        }
        for (String field : PASSED_ON) {
            BsonValue value = command.get(field);
            if (value != null) {
                opCommand.append(field, value);
            }
        }
        return opCommand;
    }

    private static void copy(BsonDocument from, BsonDocument to, String... fields) {
        for (String field : fields) {
            if (from.containsKey(field)) {
                to.append(field, from.get(field));
            }
        }
    }
}
