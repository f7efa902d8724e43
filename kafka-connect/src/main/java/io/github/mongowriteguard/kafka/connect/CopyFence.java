package io.github.mongowriteguard.kafka.connect;

import com.mongodb.MongoException;
import com.mongodb.client.MongoClient;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;
import java.util.stream.Collectors;
import org.apache.kafka.common.TopicPartition;
import org.bson.BsonArray;
import org.bson.BsonDocument;
import org.bson.BsonInt32;
import org.bson.BsonValue;

/**
 * The names the guarded sink gives its server copies, and the check a new owner of a partition makes before it
 * writes: every command of a batch carries the comment {@code mwg-connect:<connector>:<topic>:<partitions>} (the
 * partitions its records come from), which the server keeps in {@code currentOp} even when it truncates a large
 * command ({@code src/mongo/db/curop.cpp}); a task given a partition asks {@code currentOp} for a copy whose comment
 * names that partition and does not write while one runs.
 */
final class CopyFence {
    static final String PREFIX = "mwg-connect:";

    private final MongoClient client;
    private final String connector;

    CopyFence(MongoClient client, String connector) {
        this.client = client;
        this.connector = connector;
    }

    /** The comment of a batch of {@code topic} whose records come from {@code partitions}. */
    String comment(String topic, Collection<Integer> partitions) {
        return PREFIX + connector + ":" + topic + ":"
                + new TreeSet<>(partitions).stream().map(String::valueOf).collect(Collectors.joining(","));
    }

    /**
     * The operations running on the server whose comment names one of {@code partitions} of this connector.
     *
     * @param partitions the partitions to look for
     * @return the running copies ({@code opid}, comment, seconds running), empty when none
     * @throws MongoException when {@code currentOp} cannot be read (refused, unreachable): the fence is blind
     */
    List<String> runningCopies(Set<TopicPartition> partitions) {
        BsonDocument reply = client.getDatabase("admin")
                .runCommand(new BsonDocument("currentOp", new BsonInt32(1)), BsonDocument.class);
        List<String> running = new ArrayList<>();
        BsonArray ops = reply.getArray("inprog", new BsonArray());
        for (BsonValue op : ops) {
            if (!op.isDocument()) {
                continue;
            }
            BsonDocument operation = op.asDocument();
            BsonDocument command = operation.getDocument("command", new BsonDocument());
            BsonValue comment = command.get("comment");
            if (comment == null || !comment.isString()) {
                continue;
            }
            if (names(comment.asString().getValue(), partitions)) {
                running.add("opid " + operation.get("opid") + " ("
                        + comment.asString().getValue() + ", " + operation.get("secs_running") + " s)");
            }
        }
        return running;
    }

    private static String plain(BsonValue value) {
        if (value == null) {
            return "?";
        }
        if (value.isString()) {
            return value.asString().getValue();
        }
        return value.isNumber() ? String.valueOf(value.asNumber().longValue()) : value.toString();
    }

    boolean names(String comment, Set<TopicPartition> partitions) {
        String head = PREFIX + connector + ":";
        if (!comment.startsWith(head)) {
            return false;
        }
        String rest = comment.substring(head.length());
        int colon = rest.lastIndexOf(':');
        if (colon < 0) {
            return false;
        }
        String topic = rest.substring(0, colon);
        for (String partition : rest.substring(colon + 1).split(",")) {
            try {
                if (partitions.contains(new TopicPartition(topic, Integer.parseInt(partition)))) {
                    return true;
                }
            } catch (NumberFormatException e) {
                return false;
            }
        }
        return false;
    }
}
