package io.github.mongowriteguard.internal.execution;

import com.mongodb.MongoException;
import com.mongodb.MongoNamespace;
import com.mongodb.client.model.DeleteManyModel;
import com.mongodb.client.model.UpdateManyModel;
import com.mongodb.client.model.WriteModel;
import io.github.mongowriteguard.internal.catalog.CatalogSource;
import io.github.mongowriteguard.internal.catalog.ClusterCatalog;
import io.github.mongowriteguard.internal.plan.SingleDocumentById;
import java.time.Duration;
import java.util.List;
import java.util.function.LongSupplier;
import org.bson.BsonDocument;
import org.bson.BsonString;
import org.bson.BsonValue;

/**
 * When an {@code updateMany} / {@code deleteMany} whose filter pins {@code _id} may be sent as a single-document write
 * ({@link SingleDocumentById}): from the collection's type and default collation ({@code listCollections}, kept for
 * {@link #TIME_TO_LIVE}) and on a sharded cluster its shard key ({@code config.collections}), both facts of the JVM's
 * {@link ClusterCatalog}, which every guard shares. Asked only for a bulk that holds such a model, so other writes
 * never pay for it (a collection dropped and re-created with a collation, or resharded, is seen again after the time
 * to live). Every command carries the guard's deadline.
 */
final class SingleDocumentRules {

    /** How long what was learned of a collection's options is used before it is asked again. */
    public static final Duration TIME_TO_LIVE = ClusterCatalog.LIST_COLLECTIONS_TIME_TO_LIVE;

    /** How long a rule learned from a failed read is used: the failure may pass (a failover, a timeout). */
    static final Duration FAILURE_TIME_TO_LIVE = ClusterCatalog.FAILURE_TIME_TO_LIVE;

    private final ClusterCatalog catalog;

    /** The rules of the JVM's shared catalog. */
    public SingleDocumentRules() {
        this(ClusterCatalog.shared());
    }

    /** The rules of {@code catalog}. */
    public SingleDocumentRules(ClusterCatalog catalog) {
        this.catalog = catalog;
    }

    /** A catalog of its own on {@code nanoClock} (tests). */
    SingleDocumentRules(LongSupplier nanoClock) {
        this(ClusterCatalog.isolated(ClusterCatalog.Limits.DEFAULT, nanoClock));
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

    /**
     * The rule for {@code namespace}, from facts learned now or within their time to live, read through any
     * transport's catalog reads.
     */
    SingleDocumentById forCollection(CatalogSource access, MongoNamespace namespace, long maxTimeMs) {
        SingleDocumentById rule;
        boolean mongos;
        try {
            rule = fromCollectionInfo(
                    catalog.collectionInfo(access, namespace, maxTimeMs).orElse(null));
            mongos = catalog.topology(access, maxTimeMs).mongos();
        } catch (MongoException e) {
            return SingleDocumentById.never("the collection's options could not be read (listCollections: "
                    + codeName(e) + "), so its default collation is not known");
        }
        if (rule.isNever() || !mongos) {
            return rule;
        }
        try {
            List<String> shardKey = catalog.shardedCollection(access, namespace, maxTimeMs)
                    .map(entry -> List.copyOf(entry.getDocument("key").keySet()))
                    .orElse(null);
            return shardKey == null || shardKey.equals(List.of("_id")) ? rule : rule.upsertsOnlyWithShardKey(shardKey);
        } catch (MongoException e) {
            // Unauthorized is lasting; anything else may pass: both are asked again after the short time to live.
            return rule.withoutUpserts("the shard key could not be read (config.collections: " + codeName(e)
                    + "); an upsert without it is refused as updateMany but runs as updateOne from 7.0");
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

    private static String codeName(MongoException e) {
        return e instanceof com.mongodb.MongoCommandException command
                ? command.getErrorCodeName()
                : e.getClass().getSimpleName();
    }
}
