package io.github.mongowriteguard.kafka.connect;

import com.mongodb.client.MongoClient;
import com.mongodb.client.MongoCollection;
import com.mongodb.client.model.Filters;
import com.mongodb.client.model.ReplaceOptions;
import java.util.Collection;
import java.util.Set;
import java.util.TreeSet;
import org.apache.kafka.common.TopicPartition;
import org.bson.BsonArray;
import org.bson.BsonDocument;
import org.bson.BsonInt64;
import org.bson.BsonString;
import org.bson.BsonValue;

/**
 * What a task proved of a batch it handed back to Connect, where the partition's next owner can read it: Connect
 * commits a partition's offset only after a whole put, so when a put ends with a {@code RetriableException} after some
 * of its records applied, and the partition then moves to another task, the new owner is delivered those records
 * again. Before that put returns, the task writes the offsets of the records it applied or reported into one document
 * per partition ({@code {_id: "<connector>:<topic>:<partition>", done: [offsets]}}, in the collection
 * {@value #COLLECTION}); the next owner reads it before its first write of the partition and leaves those records out.
 * The document is removed when a put of the partition completes. An offset names one record forever, so the list is
 * true whenever it is read.
 */
final class ProgressStore {
    static final String COLLECTION = "mwg_connect_progress";

    private final MongoCollection<BsonDocument> collection;
    private final String connector;

    ProgressStore(MongoClient client, String database, String connector) {
        this.collection = client.getDatabase(database).getCollection(COLLECTION, BsonDocument.class);
        this.connector = connector;
    }

    private BsonString id(TopicPartition partition) {
        return new BsonString(connector + ":" + partition.topic() + ":" + partition.partition());
    }

    /** The offsets of the partition that an earlier owner applied or reported in a batch it handed back. */
    Set<Long> done(TopicPartition partition) {
        Set<Long> offsets = new TreeSet<>();
        BsonDocument document =
                collection.find(Filters.eq("_id", id(partition))).first();
        if (document != null) {
            for (BsonValue offset : document.getArray("done", new BsonArray())) {
                offsets.add(offset.asNumber().longValue());
            }
        }
        return offsets;
    }

    /** Records, before the put hands its batch back, which offsets of the partition are applied or reported. */
    void save(TopicPartition partition, Collection<Long> offsets) {
        BsonArray done = new BsonArray();
        new TreeSet<>(offsets).forEach(o -> done.add(new BsonInt64(o)));
        collection.replaceOne(
                Filters.eq("_id", id(partition)),
                new BsonDocument("_id", id(partition)).append("done", done),
                new ReplaceOptions().upsert(true));
    }

    /** Forgets the partition's progress once a put of it completed. */
    void clear(TopicPartition partition) {
        collection.deleteOne(Filters.eq("_id", id(partition)));
    }
}
