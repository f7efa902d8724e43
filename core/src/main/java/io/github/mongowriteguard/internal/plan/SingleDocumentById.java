package io.github.mongowriteguard.internal.plan;

import java.util.List;
import java.util.Objects;
import org.bson.BsonDocument;
import org.bson.BsonValue;
import org.jspecify.annotations.Nullable;

/**
 * When an {@code UpdateManyModel} or {@code DeleteManyModel} whose filter pins {@code _id} by equality may be sent as a
 * single-document statement ({@code multi: false} / {@code limit: 1}) and planned like an {@code UpdateOneModel} /
 * {@code DeleteOneModel} on that {@code _id}.
 *
 * <p>Why it is the same write: the {@code _id} index is unique on every mongod, so such a filter matches at most one
 * document per shard, and on a sharded collection mongos sends a single-document write that pins {@code _id} to the
 * same shards as the multi-document one (mongodb/mongo {@code src/mongo/s/chunk_manager_targeter.cpp},
 * {@code targetUpdate}/{@code targetDelete}: a non-multi write that reaches several shards is allowed when
 * {@code isExactIdQuery}, and is broadcast; 7.0+ {@code src/mongo/s/write_ops/write_without_shard_key_util.cpp},
 * {@code useTwoPhaseProtocol}: an exact-{@code _id} update or delete that is not an upsert and not on a time-series
 * collection skips the two-phase protocol and is broadcast the same way). Where it is not the same write, the driver's
 * form is kept, and this object says why:
 * <ul>
 *   <li>a collection whose default collation is not simple: a string or document {@code _id} compares through it
 *       ({@code isExactIdQuery} accepts the default collation), so {@code "a"} and {@code "A"} can be two documents one
 *       filter matches; numbers, ObjectIds, dates and other values no collation touches stay single;</li>
 *   <li>an upsert whose filter lacks the shard key: mongos refuses the driver's {@code multi: true} upsert
 *       ({@code ShardKeyNotFound}, "Failed to target upsert by query", every version, {@code _targetQueryForMultiUpsert}
 *       in 8.0), while from 7.0 a {@code multi: false} one runs as a write without shard key and inserts;</li>
 *   <li>a time-series collection (no unique {@code _id} index; single-document updates and deletes are refused on
 *       sharded ones) or a view, and a collection the guard could not read: never.</li>
 * </ul>
 *
 * <pre>{@code
 * PlanOptions options = PlanOptions.builder()
 *         .singleDocumentById(SingleDocumentById.always().upsertsOnlyWithShardKey(List.of("tenant", "_id")))
 *         .build();
 * }</pre>
 *
 * <p>Immutable and thread-safe.
 */
public final class SingleDocumentById {

    private static final SingleDocumentById ALWAYS = new SingleDocumentById(null, null, List.of(), null);

    /** Why no pinned write is single; null when some are. */
    private final @Nullable String never;
    /** Why a string or document {@code _id} is not single; null when it is. */
    private final @Nullable String noCollatableIds;
    /** Fields an upsert's filter must pin by equality; empty for none; null when no upsert is single. */
    private final @Nullable List<String> upsertShardKey;
    /** Why upserts are not single (null upsertShardKey), or why they need the shard key. */
    private final @Nullable String upsertReason;

    private SingleDocumentById(
            @Nullable String never,
            @Nullable String noCollatableIds,
            @Nullable List<String> upsertShardKey,
            @Nullable String upsertReason) {
        this.never = never;
        this.noCollatableIds = noCollatableIds;
        this.upsertShardKey = upsertShardKey;
        this.upsertReason = upsertReason;
    }

    /**
     * Every pinned write is single: a replica set or an unsharded or {@code _id}-sharded collection with the simple
     * default collation.
     *
     * @return the rule
     */
    public static SingleDocumentById always() {
        return ALWAYS;
    }

    /**
     * No pinned write is single: the driver's form is sent.
     *
     * @param reason why, for the plan's reason and the log (no document values)
     * @return the rule
     * @throws NullPointerException if {@code reason} is null
     */
    public static SingleDocumentById never(String reason) {
        return new SingleDocumentById(Objects.requireNonNull(reason, "reason"), null, null, reason);
    }

    /**
     * Whether no pinned write is single under this rule.
     *
     * @return {@code true} for a rule made by {@link #never(String)}
     */
    public boolean isNever() {
        return never != null;
    }

    /**
     * As this rule, but a pinned {@code _id} that a collation compares (a string, a symbol, a document) keeps the
     * driver's form.
     *
     * @param reason why, e.g. the collection's default collation
     * @return the new rule
     */
    public SingleDocumentById withoutCollatableIds(String reason) {
        return new SingleDocumentById(never, Objects.requireNonNull(reason, "reason"), upsertShardKey, upsertReason);
    }

    /**
     * As this rule, but an upsert is single only when its filter pins every one of {@code shardKeyFields} by equality
     * (then mongos targets one shard for both forms).
     *
     * @param shardKeyFields the collection's shard key fields
     * @return the new rule
     */
    public SingleDocumentById upsertsOnlyWithShardKey(List<String> shardKeyFields) {
        List<String> fields = List.copyOf(shardKeyFields);
        return new SingleDocumentById(
                never, noCollatableIds, fields, "the collection is sharded on " + fields + " and the filter lacks it");
    }

    /**
     * As this rule, but no upsert is single.
     *
     * @param reason why, e.g. the shard key could not be read
     * @return the new rule
     */
    public SingleDocumentById withoutUpserts(String reason) {
        return new SingleDocumentById(never, noCollatableIds, null, Objects.requireNonNull(reason, "reason"));
    }

    /**
     * Why a pinned write keeps the driver's form, or null when it is sent as a single-document write.
     *
     * @param id     the pinned {@code _id}
     * @param upsert whether the write is an upsert
     * @param filter the write's encoded filter
     */
    @Nullable
    String refusal(BsonValue id, boolean upsert, BsonDocument filter) {
        if (never != null) {
            return never;
        }
        if (noCollatableIds != null && isCollatable(id)) {
            return noCollatableIds;
        }
        if (upsert) {
            if (upsertShardKey == null) {
                return upsertReason;
            }
            for (String field : upsertShardKey) {
                if (FilterKeying.equality(filter, field) == null) {
                    return upsertReason;
                }
            }
        }
        return null;
    }

    /** The server's {@code CollationIndexKey::isCollatableType}: strings, symbols, objects and arrays. */
    private static boolean isCollatable(BsonValue value) {
        return value.isString() || value.isSymbol() || value.isDocument() || value.isArray();
    }

    @Override
    public boolean equals(Object o) {
        if (this == o) {
            return true;
        }
        if (!(o instanceof SingleDocumentById)) {
            return false;
        }
        SingleDocumentById that = (SingleDocumentById) o;
        return Objects.equals(never, that.never)
                && Objects.equals(noCollatableIds, that.noCollatableIds)
                && Objects.equals(upsertShardKey, that.upsertShardKey)
                && Objects.equals(upsertReason, that.upsertReason);
    }

    @Override
    public int hashCode() {
        return Objects.hash(never, noCollatableIds, upsertShardKey, upsertReason);
    }

    @Override
    public String toString() {
        if (never != null) {
            return "SingleDocumentById{never: " + never + '}';
        }
        return "SingleDocumentById{collatableIds=" + (noCollatableIds == null ? "yes" : "no (" + noCollatableIds + ")")
                + ", upserts="
                + (upsertShardKey == null
                        ? "no (" + upsertReason + ")"
                        : upsertShardKey.isEmpty() ? "yes" : "with shard key " + upsertShardKey)
                + '}';
    }
}
