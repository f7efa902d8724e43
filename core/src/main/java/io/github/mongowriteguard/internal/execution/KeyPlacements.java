package io.github.mongowriteguard.internal.execution;

import com.mongodb.MongoException;
import com.mongodb.MongoNamespace;
import com.mongodb.ReadPreference;
import com.mongodb.client.MongoCursor;
import io.github.mongowriteguard.MongoAccess;
import io.github.mongowriteguard.bulk.KeyPlacement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.function.LongSupplier;
import org.bson.BsonDocument;
import org.bson.BsonInt32;
import org.bson.BsonString;
import org.bson.BsonValue;

/**
 * Learns, once per namespace, where its documents live ({@link KeyPlacement}), so that the repeated keys of an ordered
 * request travel in as few ORDERED commands and mongos rounds as exactness allows: not behind mongos (a replica set) or
 * not sharded ({@code config.collections} has no entry), every write reaches one place; sharded on
 * {@code {_id: "hashed"}} or {@code {_id: 1}}, the shard of each {@code _id} from {@code config.chunks} (read as mongos
 * reads its routing table: by the collection's {@code uuid} from 5.0, whose entry has a {@code timestamp}, by
 * {@code ns} before). Asked only for an ordered
 * request that repeats a key; kept for {@link #TIME_TO_LIVE}. What it learns decides cost only: a chunk moved since
 * costs more child batches, never a different result. Every read carries the guard's deadline; a failed read gives
 * {@link KeyPlacement#unknown()} (the planner then assumes a shard per key, as without this) for a short while.
 */
public final class KeyPlacements {

    /** How long what was learned of a collection is used before it is asked again. */
    public static final Duration TIME_TO_LIVE = Duration.ofMinutes(1);

    /** How long a placement learned from a failed read is used. */
    static final Duration FAILURE_TIME_TO_LIVE = Duration.ofSeconds(10);

    /** More chunks than this are not read: reading them would cost more than the rounds they save. */
    static final int MAX_CHUNKS = 20_000;

    private final LearnedPerNamespace<KeyPlacement> learned;

    public KeyPlacements() {
        this(System::nanoTime);
    }

    KeyPlacements(LongSupplier nanoClock) {
        this.learned = new LearnedPerNamespace<>(TIME_TO_LIVE, FAILURE_TIME_TO_LIVE, nanoClock);
    }

    /** The placement of {@code namespace}'s documents: learned now, or within the last {@link #TIME_TO_LIVE}. */
    public KeyPlacement forCollection(MongoAccess access, MongoNamespace namespace, long maxTimeMs) {
        return learned.get(namespace, () -> {
            try {
                return new LearnedPerNamespace.Lesson<>(learn(access, namespace, maxTimeMs), false);
            } catch (MongoException e) {
                return new LearnedPerNamespace.Lesson<>(KeyPlacement.unknown(), true);
            }
        });
    }

    private static KeyPlacement learn(MongoAccess access, MongoNamespace namespace, long maxTimeMs) {
        if (!ShardingCatalog.isMongos(access, maxTimeMs)) {
            return KeyPlacement.singleTarget();
        }
        BsonDocument entry = ShardingCatalog.shardedCollection(access, namespace, maxTimeMs);
        if (entry == null) {
            return KeyPlacement.singleTarget(); // not sharded: mongos sends all its writes to one shard
        }
        BsonDocument key = entry.getDocument("key");
        if (!key.keySet().equals(java.util.Set.of("_id"))) {
            return KeyPlacement.unknown(); // an _id alone does not say where its document is
        }
        // From 5.0 the entry has a timestamp and the chunks name the collection by uuid; before, by ns.
        BsonValue uuid = entry.get("uuid");
        BsonDocument filter = entry.containsKey("timestamp") && uuid != null
                ? new BsonDocument("uuid", uuid)
                : new BsonDocument("ns", new BsonString(namespace.getFullName()));
        List<BsonDocument> chunks = new ArrayList<>();
        try (MongoCursor<BsonDocument> cursor = access.getDatabase("config")
                .getCollection("chunks", BsonDocument.class)
                .withReadPreference(ReadPreference.primary())
                .find(filter)
                .projection(new BsonDocument("min", new BsonInt32(1))
                        .append("shard", new BsonInt32(1))
                        .append("_id", new BsonInt32(0)))
                .batchSize(1_000)
                .limit(MAX_CHUNKS + 1)
                .maxTime(maxTimeMs, TimeUnit.MILLISECONDS)
                .iterator()) {
            while (cursor.hasNext()) {
                chunks.add(cursor.next());
            }
        }
        return chunks.size() > MAX_CHUNKS ? KeyPlacement.unknown() : KeyPlacement.fromChunks(key, chunks);
    }
}
