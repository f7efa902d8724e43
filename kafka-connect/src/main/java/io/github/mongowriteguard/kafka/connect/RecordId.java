package io.github.mongowriteguard.kafka.connect;

import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.connect.sink.SinkRecord;

/** A record by where Kafka keeps it: its original topic, partition and offset (before any transformation). */
record RecordId(TopicPartition partition, long offset) {

    static RecordId of(SinkRecord record) {
        return new RecordId(
                new TopicPartition(record.originalTopic(), record.originalKafkaPartition()),
                record.originalKafkaOffset());
    }
}
