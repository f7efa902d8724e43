package io.github.mongowriteguard.read;

import com.mongodb.MongoCommandException;
import com.mongodb.MongoException;
import com.mongodb.MongoExecutionTimeoutException;
import com.mongodb.MongoOperationTimeoutException;
import com.mongodb.MongoSocketReadTimeoutException;
import com.mongodb.MongoTimeoutException;
import com.mongodb.ReadConcern;
import com.mongodb.ReadPreference;
import com.mongodb.TagSet;
import com.mongodb.TaggableReadPreference;
import com.mongodb.client.MongoCollection;
import com.mongodb.client.model.CountOptions;
import com.mongodb.client.model.Projections;
import io.github.mongowriteguard.exception.ExactReadUnavailableException;
import io.github.mongowriteguard.internal.server.ErrorCodes;
import io.github.mongowriteguard.outcome.ReadSignals;
import io.github.mongowriteguard.outcome.StaleReadDiagnosis;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.Consumer;
import java.util.stream.Collectors;
import org.bson.BsonDocument;
import org.bson.BsonDocumentReader;
import org.bson.BsonValue;
import org.bson.codecs.Codec;
import org.bson.codecs.DecoderContext;
import org.bson.conversions.Bson;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A collection's reads, guarded for the time a shard's primary cannot write: an exact read first (with a server
 * deadline), and, only when the options opt in, an approximate answer when that read fails (or is expected to
 * fail) with {@code StaleConfig} or a timeout. The approximate answer is read with {@code readConcern:
 * "available"} on secondaries, which skips the shard version check and so may return orphans left by a chunk
 * migration; copies with the same {@code _id} are removed and the result says it is approximate.
 *
 * <pre>{@code
 * GuardedReads<Document> stock = GuardedReads.wrap(
 *     client.getDatabase("demo").getCollection("store_inventory")
 *         .withReadPreference(ReadPreference.secondaryPreferred()),
 *     ReadGuardOptions.builder().degradedReads(true).build());
 * ReadResult<Document> screen = stock.find(Filters.eq("_id.storeId", 7));   // may be approximate, says so
 * long owed = stock.countExact(Filters.eq("status", "unpaid"));            // never approximate
 * }</pre>
 *
 * <p>The path of one read: expected to fail? -> exact read with {@code maxTimeMS} -> classify a failure into
 * signals (StaleConfig by shard, timeouts) -> exact only: throw {@link ExactReadUnavailableException} with the
 * diagnosis; degraded allowed: read with {@code readConcern: "available"}, de-duplicate by {@code _id}, return
 * an approximate {@link ReadResult}. Other errors are the driver's, unchanged.
 *
 * @param <T> the collection's document class
 */
public final class GuardedReads<T> {
    private static final Logger log = LoggerFactory.getLogger(GuardedReads.class);

    private final MongoCollection<T> collection;
    private final ReadGuardOptions options;
    private final String namespace;
    private final AtomicReference<ReadSignals> signals;
    private volatile Instant failureExpectedUntil = Instant.MIN;

    private GuardedReads(MongoCollection<T> collection, ReadGuardOptions options) {
        this.collection = collection;
        this.options = options;
        this.namespace = collection.getNamespace().getFullName();
        this.signals = new AtomicReference<>(
                ReadSignals.none(namespace).withReadTarget(describe(collection.getReadPreference())));
    }

    /**
     * Guarded reads with {@link ReadGuardOptions#defaults()}: exact reads only.
     *
     * @param <T>        the collection's document class
     * @param collection the collection
     * @return guarded reads of {@code collection}
     */
    public static <T> GuardedReads<T> wrap(MongoCollection<T> collection) {
        return wrap(collection, ReadGuardOptions.defaults());
    }

    /**
     * Guarded reads of {@code collection} with its read preference and codecs. The collection (immutable in the
     * driver) is kept; the options decide whether approximate answers are allowed.
     *
     * @param <T>        the collection's document class
     * @param collection the collection
     * @param options    whether and how reads degrade
     * @return guarded reads of {@code collection}
     */
    public static <T> GuardedReads<T> wrap(MongoCollection<T> collection, ReadGuardOptions options) {
        return new GuardedReads<>(
                Objects.requireNonNull(collection, "collection"), Objects.requireNonNull(options, "options"));
    }

    /** {@return the driver's collection these reads use} */
    public MongoCollection<T> unwrap() {
        return collection;
    }

    /** {@return the options} */
    public ReadGuardOptions options() {
        return options;
    }

    /**
     * The documents matching {@code filter}: exact, or, with degraded reads on and the exact read failing with
     * StaleConfig or a timeout, approximate (see {@link ReadResult#isApproximate()}).
     *
     * @throws ExactReadUnavailableException when the exact read failed with such a signal and no approximate
     *                                       answer is allowed, or the degraded read failed as well
     * @throws MongoException                for any other failure, as the driver raised it
     * @param filter the query filter
     * @return the documents, and whether they are exact
     */
    public ReadResult<T> find(Bson filter) {
        Objects.requireNonNull(filter, "filter");
        if (options.isDegradedReads() && failureExpected()) {
            return degradedFind(filter, ApproximationReason.NORMAL_READ_EXPECTED_TO_FAIL, null);
        }
        try {
            return ReadResult.exact(collection
                    .find(filter)
                    .maxTime(options.getNormalReadTimeout().toMillis(), TimeUnit.MILLISECONDS)
                    .into(new ArrayList<>()));
        } catch (MongoException e) {
            if (!recordSignal(e)) {
                throw e;
            }
            if (!options.isDegradedReads()) {
                throw new ExactReadUnavailableException("exact read of " + namespace + " failed", diagnose(), e);
            }
            return degradedFind(filter, ApproximationReason.NORMAL_READ_FAILED, e);
        }
    }

    /**
     * An exact count, never approximate.
     *
     * @param filter the query filter
     * @return the number of matching documents
     * @throws ExactReadUnavailableException when the count failed with StaleConfig or a timeout
     */
    public long countExact(Bson filter) {
        return count(filter, CountAccuracy.EXACT).count();
    }

    /**
     * A count; approximate only when {@code accuracy} is {@link CountAccuracy#APPROXIMATE_ALLOWED} and the options
     * turn degraded reads on (otherwise it behaves as {@link #countExact}). An approximate count counts distinct
     * {@code _id}s read with {@code readConcern: "available"}.
     *
     * @param filter   the query filter
     * @param accuracy whether an approximate count is acceptable
     * @return the count, and whether it is exact
     */
    public CountResult count(Bson filter, CountAccuracy accuracy) {
        Objects.requireNonNull(filter, "filter");
        Objects.requireNonNull(accuracy, "accuracy");
        boolean approximateAllowed = accuracy == CountAccuracy.APPROXIMATE_ALLOWED && options.isDegradedReads();
        if (approximateAllowed && failureExpected()) {
            return degradedCount(filter, ApproximationReason.NORMAL_READ_EXPECTED_TO_FAIL, null);
        }
        try {
            return new CountResult(
                    collection.countDocuments(
                            filter,
                            new CountOptions()
                                    .maxTime(options.getNormalReadTimeout().toMillis(), TimeUnit.MILLISECONDS)),
                    null);
        } catch (MongoException e) {
            if (!recordSignal(e)) {
                throw e;
            }
            if (!approximateAllowed) {
                throw new ExactReadUnavailableException(
                        "exact count of " + namespace + " failed"
                                + (accuracy == CountAccuracy.APPROXIMATE_ALLOWED
                                        ? " (approximate counts need degradedReads on)"
                                        : ""),
                        diagnose(),
                        e);
            }
            return degradedCount(filter, ApproximationReason.NORMAL_READ_FAILED, e);
        }
    }

    /**
     * Adds a signal the reads cannot see themselves: the primary of {@code shard} is alive but does not complete
     * writes (e.g. writes to it end in server deadlines). It sharpens {@link #diagnose()}.
     *
     * @param shard the shard id
     */
    public void reportPrimaryNotAcceptingWrites(String shard) {
        Objects.requireNonNull(shard, "shard");
        signals.updateAndGet(s -> s.withPrimaryNotAcceptingWrites(shard));
    }

    /**
     * The signals observed so far.
     *
     * @return the signals
     */
    public ReadSignals signals() {
        return signals.get();
    }

    /**
     * What the signals observed so far say: which shard, which node, why.
     *
     * @return the diagnosis
     */
    public StaleReadDiagnosis diagnose() {
        return StaleReadDiagnosis.of(signals.get());
    }

    // ---- steps ------------------------------------------------------------------------------------------

    private boolean failureExpected() {
        return options.getClock().instant().isBefore(failureExpectedUntil);
    }

    /** Records StaleConfig or a timeout and returns true; returns false for every other failure. */
    private boolean recordSignal(MongoException e) {
        if (e.getCode() == ErrorCodes.STALE_CONFIG) {
            @Nullable
            String named = e instanceof MongoCommandException command
                            && command.getResponse().isString("shardId")
                    ? command.getResponse().getString("shardId").getValue()
                    : null;
            String shard = named == null ? ReadSignals.UNKNOWN_SHARD : named;
            signals.updateAndGet(s -> s.withStaleConfig(named));
            notify(options.getListener()::staleConfig, new ReadGuardListener.StaleConfigEvent(namespace, shard));
        } else if (isTimeout(e)) {
            signals.updateAndGet(ReadSignals::withTimeout);
            notify(
                    options.getListener()::readTimedOut,
                    new ReadGuardListener.ReadTimeoutEvent(
                            namespace, e.getClass().getSimpleName()));
        } else {
            return false;
        }
        Duration expect = options.getExpectFailureFor();
        if (!expect.isZero()) {
            failureExpectedUntil = options.getClock().instant().plus(expect);
        }
        return true;
    }

    private static boolean isTimeout(MongoException e) {
        return e instanceof MongoExecutionTimeoutException
                || e instanceof MongoSocketReadTimeoutException
                || e instanceof MongoTimeoutException
                || e instanceof MongoOperationTimeoutException
                || e.getCode() == ErrorCodes.MAX_TIME_MS_EXPIRED
                || e.getCode() == ErrorCodes.EXCEEDED_TIME_LIMIT;
    }

    private ReadResult<T> degradedFind(
            Bson filter, ApproximationReason reason, @Nullable MongoException normalFailure) {
        long start = System.nanoTime();
        Distinct distinct = readAvailable(filter, null, normalFailure);
        Codec<T> codec = collection.getCodecRegistry().get(collection.getDocumentClass());
        List<T> documents = new ArrayList<>(distinct.kept.size());
        for (BsonDocument document : distinct.kept.values()) {
            documents.add(codec.decode(
                    new BsonDocumentReader(document), DecoderContext.builder().build()));
        }
        Approximation approximation = new Approximation(reason, diagnose(), distinct.duplicates, distinct.conflicts);
        notify(
                options.getListener()::degradedRead,
                new ReadGuardListener.DegradedReadEvent(
                        namespace,
                        reason,
                        documents.size(),
                        distinct.duplicates,
                        Duration.ofNanos(System.nanoTime() - start)));
        return ReadResult.approximate(documents, approximation);
    }

    private CountResult degradedCount(Bson filter, ApproximationReason reason, @Nullable MongoException normalFailure) {
        long start = System.nanoTime();
        Distinct distinct = readAvailable(filter, Projections.include("_id"), normalFailure);
        notify(
                options.getListener()::degradedRead,
                new ReadGuardListener.DegradedReadEvent(
                        namespace,
                        reason,
                        distinct.kept.size(),
                        distinct.duplicates,
                        Duration.ofNanos(System.nanoTime() - start)));
        return new CountResult(
                distinct.kept.size(), new Approximation(reason, diagnose(), distinct.duplicates, distinct.conflicts));
    }

    /** The degraded read: readConcern "available" on secondaries, every {@code _id} once (the first copy seen). */
    private Distinct readAvailable(Bson filter, @Nullable Bson projection, @Nullable MongoException normalFailure) {
        var find = collection
                .withDocumentClass(BsonDocument.class)
                .withReadConcern(ReadConcern.AVAILABLE)
                .withReadPreference(degradedReadPreference())
                .find(filter)
                .maxTime(options.getDegradedReadTimeout().toMillis(), TimeUnit.MILLISECONDS);
        if (projection != null) {
            find = find.projection(projection);
        }
        Distinct distinct = new Distinct();
        try {
            for (BsonDocument document : find) {
                BsonValue id = document.get("_id");
                @Nullable BsonDocument kept = id == null ? null : distinct.kept.get(id);
                if (kept == null) {
                    distinct.kept.put(id == null ? new org.bson.BsonObjectId() : id, document);
                } else {
                    distinct.duplicates++;
                    if (!kept.equals(document)) {
                        distinct.conflicts++;
                    }
                }
            }
        } catch (MongoException e) {
            recordSignal(e);
            ExactReadUnavailableException failure = new ExactReadUnavailableException(
                    "the degraded read of " + namespace + " (readConcern \"available\") failed too", diagnose(), e);
            if (normalFailure != null) {
                failure.addSuppressed(normalFailure);
            }
            throw failure;
        }
        return distinct;
    }

    private ReadPreference degradedReadPreference() {
        ReadPreference configured = options.getDegradedReadPreference();
        if (configured != null) {
            return configured;
        }
        ReadPreference own = collection.getReadPreference();
        return own.equals(ReadPreference.primary()) ? ReadPreference.secondaryPreferred() : own;
    }

    private static final class Distinct {
        final Map<BsonValue, BsonDocument> kept = new LinkedHashMap<>();
        int duplicates;
        int conflicts;
    }

    /** A listener never breaks a read. */
    private static <E> void notify(Consumer<E> callback, E event) {
        try {
            callback.accept(event);
        } catch (RuntimeException e) {
            log.warn("read guard listener failed on {}; the read goes on", event, e);
        }
    }

    /** The read preference as an operator names a node: {@code secondary [node:a1]}. */
    static String describe(ReadPreference preference) {
        if (preference instanceof TaggableReadPreference taggable
                && !taggable.getTagSetList().isEmpty()) {
            return preference.getName() + " "
                    + taggable.getTagSetList().stream()
                            .map(GuardedReads::describe)
                            .collect(Collectors.joining(", ", "[", "]"));
        }
        return preference.getName();
    }

    private static String describe(TagSet tags) {
        if (!tags.iterator().hasNext()) {
            return "any";
        }
        List<String> parts = new ArrayList<>();
        tags.forEach(tag -> parts.add(tag.getName() + ":" + tag.getValue()));
        return String.join(",", parts);
    }

    @Override
    public String toString() {
        return "GuardedReads{" + namespace + ", " + options + "}";
    }
}
