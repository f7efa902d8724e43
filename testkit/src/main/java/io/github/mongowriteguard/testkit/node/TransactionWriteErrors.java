package io.github.mongowriteguard.testkit.node;

import io.github.mongowriteguard.testkit.engine.StorageEngine;
import io.github.mongowriteguard.testkit.server.ServerVersion;
import org.bson.BsonArray;
import org.bson.BsonDocument;
import org.bson.BsonDouble;
import org.bson.BsonInt32;
import org.bson.BsonString;

/**
 * A write error inside a multi-document transaction, as mongod's {@code handleError} answers it (mongodb/mongo
 * {@code src/mongo/db/ops/write_ops_exec.cpp}): a transient transaction error fails the whole command
 * ({@code ok: 0}, "Tell the client to try the whole txn again, by returning ok: 0 with errorLabels"); any other is
 * recorded as the statement's write error, stops the batch ("If we are in a transaction, we must fail the whole
 * batch") and aborts the transaction ({@code txnParticipant.abortTransaction}). The reply is then {@code ok: 1} with
 * {@code writeErrors}, which the driver raises as {@code MongoWriteException} / {@code MongoBulkWriteException}, and
 * the transaction's later statements and its commit answer {@code NoSuchTransaction}.
 */
final class TransactionWriteErrors {
    private TransactionWriteErrors() {}

    /** The reply to a write command whose statement failed with the first of {@code engineReply}'s write errors. */
    static BsonDocument reply(BsonDocument command, BsonDocument engineReply, ServerVersion version) {
        BsonDocument first = engineReply.getArray("writeErrors").get(0).asDocument();
        int code = first.getNumber("code").intValue();
        if (ErrorLabels.isTransientTransactionError(code, version)) {
            return commandError(engineReply);
        }
        int index = first.getNumber("index", new BsonInt32(0)).intValue();
        // The statements before the failed one ran; the batch stops at it, ordered or not.
        int n = command.getFirstKey().equals("insert")
                ? index
                : Math.min(index, engineReply.getNumber("n", new BsonInt32(0)).intValue());
        BsonDocument reply = new BsonDocument("n", new BsonInt32(n));
        if (command.getFirstKey().equals("update")) {
            reply.put(
                    "nModified",
                    new BsonInt32(Math.min(
                            n,
                            engineReply.getNumber("nModified", new BsonInt32(0)).intValue())));
        }
        BsonDocument error = new BsonDocument("index", new BsonInt32(index))
                .append("code", new BsonInt32(code))
                .append("codeName", new BsonString(ErrorCodeNames.of(code)))
                .append("errmsg", first.getString("errmsg", new BsonString("write error")));
        if (first.containsKey("errInfo")) {
            error.put("errInfo", first.get("errInfo"));
        }
        if (first.containsKey("keyPattern")) {
            error.put("keyPattern", first.get("keyPattern"));
            error.put("keyValue", first.get("keyValue"));
        }
        return reply.append("writeErrors", new BsonArray(java.util.List.of(error)))
                .append("ok", new BsonDouble(1));
    }

    /** The first write error as a whole-command error ({@code ok: 0}). */
    static BsonDocument commandError(BsonDocument engineReply) {
        BsonDocument first = engineReply.getArray("writeErrors").get(0).asDocument();
        int code = first.getNumber("code").intValue();
        return StorageEngine.error(
                code,
                ErrorCodeNames.of(code),
                first.getString("errmsg", new BsonString("write error")).getValue());
    }
}
