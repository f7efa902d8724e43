package io.github.mongowriteguard.internal.execution;

import com.mongodb.MongoException;
import com.mongodb.MongoNamespace;
import com.mongodb.ReadPreference;
import com.mongodb.client.model.DeleteManyModel;
import com.mongodb.client.model.UpdateManyModel;
import com.mongodb.client.model.WriteModel;
import io.github.mongowriteguard.MongoAccess;
import io.github.mongowriteguard.bulk.SingleDocumentById;
import io.github.mongowriteguard.internal.execution.LearnedPerNamespace.Lesson;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.function.LongSupplier;
import org.bson.BsonArray;
import org.bson.BsonDocument;
import org.bson.BsonInt32;
import org.bson.BsonInt64;
import org.bson.BsonString;
import org.bson.BsonValue;

/**
 * Learns, once per namespace, when an {@code updateMany} / {@code deleteMany} whose filter pins {@code _id} may be sent
 * as a single-document write ({@link SingleDocumentById}): the collection's type and default collation from
 * {@code listCollections}, and on a sharded cluster its shard key from {@code config.collections}. Asked only for a
 * bulk that holds such a model, so other writes never pay for it; kept for {@link #TIME_TO_LIVE} (a collection dropped
 * and re-created with a collation, or resharded, is seen again after that). Every command carries the guard's
 * deadline.
 */
public final class SingleDocumentRules {

    /** How long what was learned of a collection is used before it is asked again. */
    public static final Duration TIME_TO_LIVE = Duration.ofMinutes(5);

    /** How long a rule learned from a failed read is used: the failure may pass (a failover, a timeout). */
    static final Duration FAILURE_TIME_TO_LIVE = Duration.ofSeconds(10);

    private final LearnedPerNamespace<SingleDocumentById> learned;

    public SingleDocumentRules() {
        this(System::nanoTime);
    }

    SingleDocumentRules(LongSupplier nanoClock) {
        this.learned = new LearnedPerNamespace<>(TIME_TO_LIVE, FAILURE_TIME_TO_LIVE, nanoClock);
    }

    /** Whether the bulk has a model the rule is for; the others never need it. */
    static boolean needed(List<? extends WriteModel<?>> models) {
        if (models == null) {
            return false;
        }
        for (WriteModel<?> model : models) {
            if (model instanceof UpdateManyModel || model instanceof DeleteManyModel) {
                return true;
            }
        }
        return false;
    }

    /** The rule for {@code namespace}: learned now, or within the last {@link #TIME_TO_LIVE}. */
    SingleDocumentById forCollection(MongoAccess access, MongoNamespace namespace, long maxTimeMs) {
        return learned.get(namespace, () -> learn(access, namespace, maxTimeMs));
    }

    private static Lesson<SingleDocumentById> learn(MongoAccess access, MongoNamespace namespace, long maxTimeMs) {
        BsonDocument options;
        SingleDocumentById rule;
        try {
            options = collectionInfo(access, namespace, maxTimeMs);
            rule = fromCollectionInfo(options);
            if (rule.isNever() || !ShardingCatalog.isMongos(access, maxTimeMs)) {
                return new Lesson<>(rule, false);
            }
        } catch (MongoException e) {
            return new Lesson<>(
                    SingleDocumentById.never("the collection's options could not be read (listCollections: "
                            + codeName(e) + "), so its default collation is not known"),
                    true);
        }
        try {
            List<String> shardKey = shardKeyFields(access, namespace, maxTimeMs);
            return new Lesson<>(
                    shardKey == null || shardKey.equals(List.of("_id")) ? rule : rule.upsertsOnlyWithShardKey(shardKey),
                    false);
        } catch (MongoException e) {
            // Unauthorized is lasting; anything else may pass: both are asked again after the short time to live.
            return new Lesson<>(
                    rule.withoutUpserts("the shard key could not be read (config.collections: " + codeName(e)
                            + "); an upsert without it is refused as updateMany but runs as updateOne from 7.0"),
                    true);
        }
    }

    /**
     * The rule a {@code listCollections} entry allows, before the shard key is known: none for a time-series
     * collection or a view; no collatable {@code _id}s under a non-simple default collation.
     *
     * @param info the entry ({@code {name, type, options: {collation, ...}, ...}}), or null for a missing collection
     */
    static SingleDocumentById fromCollectionInfo(BsonDocument info) {
        if (info == null) {
            return SingleDocumentById.always(); // created by the write itself: simple collation, a plain collection
        }
        String type = info.getString("type", new BsonString("collection")).getValue();
        if (!type.equals("collection")) {
            // A time-series collection has no unique _id index, and mongos refuses single-document updates and
            // deletes on a sharded one (chunk_manager_targeter.cpp: "A {multi:false} update on a sharded
            // timeseries collection is disallowed"); a view cannot be written.
            return SingleDocumentById.never("the collection is a " + type);
        }
        BsonValue collation = info.getDocument("options", new BsonDocument()).get("collation");
        if (collation == null || !collation.isDocument()) {
            return SingleDocumentById.always();
        }
        String locale = collation
                .asDocument()
                .getString("locale", new BsonString("simple"))
                .getValue();
        return locale.equals("simple")
                ? SingleDocumentById.always()
                : SingleDocumentById.always()
                        .withoutCollatableIds("the collection's default collation (" + locale
                                + ") can make different string _ids equal");
    }

    /** The collection's {@code listCollections} entry, or null when it does not exist (yet). */
    private static BsonDocument collectionInfo(MongoAccess access, MongoNamespace namespace, long maxTimeMs) {
        BsonDocument reply = access.getDatabase(namespace.getDatabaseName())
                .runCommand(
                        new BsonDocument("listCollections", new BsonInt32(1))
                                .append(
                                        "filter",
                                        new BsonDocument("name", new BsonString(namespace.getCollectionName())))
                                .append("maxTimeMS", new BsonInt64(maxTimeMs)),
                        ReadPreference.primary(),
                        BsonDocument.class);
        BsonArray batch = reply.getDocument("cursor").getArray("firstBatch", new BsonArray());
        return batch.isEmpty() ? null : batch.get(0).asDocument();
    }

    /** The shard key's fields, or null when the collection is not sharded. */
    private static List<String> shardKeyFields(MongoAccess access, MongoNamespace namespace, long maxTimeMs) {
        BsonDocument entry = ShardingCatalog.shardedCollection(access, namespace, maxTimeMs);
        return entry == null ? null : new ArrayList<>(entry.getDocument("key").keySet());
    }

    private static String codeName(MongoException e) {
        return e instanceof com.mongodb.MongoCommandException command
                ? command.getErrorCodeName()
                : e.getClass().getSimpleName();
    }
}
