package io.github.mongowriteguard.kafka.connect;

import io.github.mongowriteguard.testkit.truth.ReceivedCommand;
import io.github.mongowriteguard.testkit.truth.ServerTruth;
import io.github.mongowriteguard.testkit.truth.WriteStatement;
import java.util.ArrayList;
import java.util.List;
import org.bson.BsonDocument;
import org.bson.BsonValue;

/**
 * The most server copies of one record's write that ran at the same moment on the shards, from the shards' truth: a
 * copy is an {@code (lsid, txnNumber)}, a record is its {@link RecordLedger} mark ({@code r.<number>} in the update's
 * {@code $inc}), else its statement's {@code _id} and statement id. A resend of the same copy (the same session,
 * {@code txnNumber} and statement, e.g. waiting on the session's check-out) is the same copy; a new owner's copy beside
 * a dead or old owner's copy still running is a second one. Public, in the module's test jar, for the lab.
 */
public final class RecordCopies {
    private RecordCopies() {}

    /**
     * The most copies of one record's write running at once among the shards' writes to {@code namespace}.
     *
     * @param shards    the shards' truth ({@code EmulatedShardedCluster.truth()})
     * @param namespace {@code db.collection} the sink writes to
     * @return the count and the record it was seen for
     */
    public static ServerTruth.CopiesAtOnce maxAtOnce(ServerTruth shards, String namespace) {
        return shards.maxConcurrentCopiesPerKey(c -> namespace.equals(c.namespace()), RecordCopies::records);
    }

    /** The records a command's statements write. */
    static List<String> records(ReceivedCommand command) {
        List<String> records = new ArrayList<>();
        for (WriteStatement statement : command.statements()) {
            records.add(record(statement));
        }
        return records;
    }

    private static String record(WriteStatement statement) {
        BsonDocument body = statement.body();
        BsonValue update = body.get("u");
        if (update != null && update.isDocument() && update.asDocument().isDocument("$inc")) {
            for (String field : update.asDocument().getDocument("$inc").keySet()) {
                if (field.startsWith(RecordLedger.MARKS + ".")) {
                    return field;
                }
            }
        }
        BsonValue filter = body.get("q");
        BsonValue id =
                filter != null && filter.isDocument() ? filter.asDocument().get("_id") : body.get("_id");
        return id + "#" + statement.stmtId();
    }
}
