package io.github.mongowriteguard.kafka.connect;

import com.mongodb.client.model.DeleteManyModel;
import com.mongodb.client.model.UpdateManyModel;
import com.mongodb.client.model.WriteModel;
import com.mongodb.kafka.connect.sink.OfficialSinkProcessing.ProcessedRecord;
import io.github.mongowriteguard.copies.StatementIds;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import org.apache.kafka.common.TopicPartition;

/**
 * The server identity of each record's write, from where Kafka keeps the record, so that whoever writes it (the
 * partition's owner, its next owner after a crash, a zombie) sends the same retryable-write statement and the server
 * applies it once: one logical session per (connector, topic, partition), {@code lsid.id} a name-based UUID of those
 * three; the transaction number {@code offset / 2^16} (a block); the statement id {@code offset % 2^16}. The server
 * keeps the executed statements of a session's active transaction number in memory and reads them back from the oplog
 * chain on a refresh (mongodb/mongo {@code src/mongo/db/transaction/transaction_participant.cpp}), so a block stays at
 * 65,536 statements. One record is one write model, one statement; a guarded bulk never mixes partitions or blocks.
 */
final class PartitionStatements {
    static final int BLOCK_BITS = 16;
    private static final long STATEMENT_MASK = (1L << BLOCK_BITS) - 1;

    private PartitionStatements() {}

    /** The logical session id of a partition of a connector. */
    static UUID sessionId(String connector, TopicPartition partition) {
        String name = "mwg-connect-session:" + connector.length() + ":" + connector + ":"
                + partition.topic().length() + ":" + partition.topic() + ":" + partition.partition();
        return UUID.nameUUIDFromBytes(name.getBytes(StandardCharsets.UTF_8));
    }

    static long block(long offset) {
        return offset >>> BLOCK_BITS;
    }

    static int statement(long offset) {
        return (int) (offset & STATEMENT_MASK);
    }

    /**
     * A batch's records by (partition, block), in the batch's order within each group; the groups in the order their
     * first records come (a partition's blocks in increasing order, as its offsets are).
     */
    static List<List<ProcessedRecord>> groups(List<ProcessedRecord> batch) {
        Map<Object, List<ProcessedRecord>> groups = new LinkedHashMap<>();
        for (ProcessedRecord record : batch) {
            RecordId id = RecordId.of(record.record());
            groups.computeIfAbsent(List.of(id.partition(), block(id.offset())), k -> new ArrayList<>())
                    .add(record);
        }
        return new ArrayList<>(groups.values());
    }

    /**
     * The identity of a group's writes, or null when one of them is a multi-document write (a custom write model
     * strategy's {@code UpdateManyModel} or {@code DeleteManyModel}), which the server runs without a statement record:
     * such a group is written as before, without ids (at-least-once across a crash).
     */
    static StatementIds ids(String connector, List<ProcessedRecord> group) {
        int[] statements = new int[group.size()];
        for (int i = 0; i < statements.length; i++) {
            WriteModel<?> model = group.get(i).model();
            if (model instanceof UpdateManyModel<?> || model instanceof DeleteManyModel<?>) {
                return null;
            }
            statements[i] = statement(RecordId.of(group.get(i).record()).offset());
        }
        RecordId first = RecordId.of(group.get(0).record());
        return StatementIds.of(sessionId(connector, first.partition()), block(first.offset()), statements);
    }
}
