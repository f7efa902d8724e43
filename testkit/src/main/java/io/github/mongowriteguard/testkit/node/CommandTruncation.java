package io.github.mongowriteguard.testkit.node;

import io.github.mongowriteguard.testkit.wire.Bson;
import java.util.Map;
import org.bson.BsonDocument;
import org.bson.BsonString;
import org.bson.BsonValue;

/**
 * {@code currentOp}'s truncation of a large {@code command}, as mongod's {@code CurOp::reportState} does with
 * {@code truncateOps} (the {@code currentOp} command always, the {@code $currentOp} stage only with
 * {@code truncateOps: true}): a command whose BSON is larger than 1,000 bytes is shown as
 * {@code {$truncated: <its string form, cut to 1,000 characters ending in "...">, comment: <its comment>}}
 * (mongodb/mongo {@code src/mongo/db/curop.cpp}, {@code appendAsObjOrString} and
 * {@code maxQuerySize{truncateOps, 1000}}; 4.2 to 7.0). Every other field of the command, {@code txnNumber} and
 * {@code lsid} included, is gone from {@code command}; the top-level {@code lsid} of the operation stays.
 *
 * <p>The string form follows {@code BSONObj::toString()} ({@code { insert: "c", documents: [ { _id: 1 } ] }});
 * its exact spelling of every BSON type is an approximation. From 7.0 the server removes {@code comment} from the
 * string before cutting it; 4.4 (the emulated default) keeps it, as here.
 */
final class CommandTruncation {
    /** {@code maxQuerySize}: the limit in bytes of a command shown whole, and the length of the cut string. */
    static final int MAX_SIZE = 1000;

    private CommandTruncation() {}

    /** The command as {@code currentOp} shows it with {@code truncateOps}. */
    static BsonDocument truncated(BsonDocument command) {
        if (Bson.encode(command).length <= MAX_SIZE) {
            return command;
        }
        String text = toShellString(command);
        if (text.length() > MAX_SIZE) {
            text = text.substring(0, MAX_SIZE - 3) + "...";
        }
        BsonDocument truncated = new BsonDocument("$truncated", new BsonString(text));
        if (command.containsKey("comment")) {
            truncated.append("comment", command.get("comment"));
        }
        return truncated;
    }

    /** {@code BSONObj::toString()}-like text: {@code { a: 1, b: "x", c: [ 1, 2 ] }}. */
    static String toShellString(BsonValue value) {
        StringBuilder out = new StringBuilder();
        append(out, value);
        return out.toString();
    }

    private static void append(StringBuilder out, BsonValue value) {
        switch (value.getBsonType()) {
            case DOCUMENT:
                BsonDocument document = value.asDocument();
                if (document.isEmpty()) {
                    out.append("{}");
                    return;
                }
                out.append("{ ");
                boolean first = true;
                for (Map.Entry<String, BsonValue> entry : document.entrySet()) {
                    if (!first) {
                        out.append(", ");
                    }
                    first = false;
                    out.append(entry.getKey()).append(": ");
                    append(out, entry.getValue());
                }
                out.append(" }");
                return;
            case ARRAY:
                if (value.asArray().isEmpty()) {
                    out.append("[]");
                    return;
                }
                out.append("[ ");
                for (int i = 0; i < value.asArray().size(); i++) {
                    if (i > 0) {
                        out.append(", ");
                    }
                    append(out, value.asArray().get(i));
                }
                out.append(" ]");
                return;
            case STRING:
                out.append('"')
                        .append(value.asString()
                                .getValue()
                                .replace("\\", "\\\\")
                                .replace("\"", "\\\""))
                        .append('"');
                return;
            case INT32:
                out.append(value.asInt32().getValue());
                return;
            case INT64:
                out.append(value.asInt64().getValue());
                return;
            case DOUBLE:
                double d = value.asDouble().getValue();
                out.append(
                        d == Math.rint(d) && !Double.isInfinite(d)
                                ? String.valueOf((long) d) + ".0"
                                : String.valueOf(d));
                return;
            case DECIMAL128:
                out.append("NumberDecimal(\"")
                        .append(value.asDecimal128().getValue())
                        .append("\")");
                return;
            case BOOLEAN:
                out.append(value.asBoolean().getValue());
                return;
            case NULL:
                out.append("null");
                return;
            case OBJECT_ID:
                out.append("ObjectId('")
                        .append(value.asObjectId().getValue().toHexString())
                        .append("')");
                return;
            case DATE_TIME:
                out.append("new Date(").append(value.asDateTime().getValue()).append(')');
                return;
            case BINARY:
                if (value.asBinary().getType() == 4 && value.asBinary().getData().length == 16) {
                    out.append("UUID(\"").append(value.asBinary().asUuid()).append("\")");
                } else {
                    out.append("BinData(")
                            .append(value.asBinary().getType())
                            .append(", ")
                            .append(java.util.HexFormat.of()
                                    .withUpperCase()
                                    .formatHex(value.asBinary().getData()))
                            .append(')');
                }
                return;
            case TIMESTAMP:
                out.append("Timestamp(")
                        .append(value.asTimestamp().getTime())
                        .append(", ")
                        .append(value.asTimestamp().getInc())
                        .append(')');
                return;
            default:
                out.append(value);
        }
    }
}
