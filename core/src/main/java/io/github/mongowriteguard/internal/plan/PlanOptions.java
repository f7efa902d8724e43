package io.github.mongowriteguard.internal.plan;

import com.mongodb.client.model.BulkWriteOptions;
import io.github.mongowriteguard.bulk.PlanMode;
import java.util.Objects;
import java.util.function.Supplier;

/**
 * What the caller asked of one bulk: ordered or not, and whether an ordered bulk must keep the driver's strict
 * ORDERED semantics.
 *
 * <p>Immutable. Usually derived from the caller's driver options and the guard's settings:
 * <pre>{@code
 * PlanOptions options = PlanOptions.from(new BulkWriteOptions().ordered(false), settings.isStrictOrdered());
 * PlanOptions quick = PlanOptions.ordered();          // the driver's default
 * }</pre>
 */
public final class PlanOptions {

    private static final SingleDocumentById NOT_KNOWN =
            SingleDocumentById.never("the planner was not told the collection's collation and shard key");
    private static final Supplier<KeyPlacement> UNKNOWN_PLACEMENT = KeyPlacement::unknown;
    private static final PlanOptions ORDERED = builder().build();
    private static final PlanOptions UNORDERED = builder().ordered(false).build();

    private final boolean ordered;
    private final boolean strictOrdered;
    private final boolean lastWriteWins;
    private final SingleDocumentById singleDocumentById;
    private final Supplier<KeyPlacement> keyPlacement;

    private PlanOptions(Builder builder) {
        this.keyPlacement = builder.keyPlacement;
        this.ordered = builder.ordered;
        this.strictOrdered = builder.strictOrdered;
        this.lastWriteWins = builder.lastWriteWins;
        this.singleDocumentById = builder.singleDocumentById;
    }

    /**
     * An ordered request, not strict: the driver's default.
     *
     * @return the shared instance
     */
    public static PlanOptions ordered() {
        return ORDERED;
    }

    /**
     * An unordered request.
     *
     * @return the shared instance
     */
    public static PlanOptions unordered() {
        return UNORDERED;
    }

    /**
     * Reads {@code ordered} from the caller's driver options, read once, never kept; {@code strictOrdered} is the
     * guard's setting ({@code WriteGuardSettings.isStrictOrdered()}).
     *
     * @param bulkWriteOptions the caller's driver options; only {@code ordered} is read
     * @param strictOrdered    the guard's {@code strictOrdered} setting
     * @return the options
     * @throws NullPointerException if {@code bulkWriteOptions} is null
     */
    public static PlanOptions from(BulkWriteOptions bulkWriteOptions, boolean strictOrdered) {
        Objects.requireNonNull(bulkWriteOptions, "bulkWriteOptions");
        return builder()
                .ordered(bulkWriteOptions.isOrdered())
                .strictOrdered(strictOrdered)
                .build();
    }

    /**
     * A builder with the defaults: ordered, not strict.
     *
     * @return a new builder
     */
    public static Builder builder() {
        return new Builder();
    }

    /**
     * A builder starting from {@code existing}'s values.
     *
     * @param existing the options to start from
     * @return a new builder
     * @throws NullPointerException if {@code existing} is null
     */
    public static Builder builder(PlanOptions existing) {
        Objects.requireNonNull(existing, "existing");
        return new Builder()
                .ordered(existing.ordered)
                .strictOrdered(existing.strictOrdered)
                .lastWriteWins(existing.lastWriteWins)
                .singleDocumentById(existing.singleDocumentById)
                .keyPlacement(existing.keyPlacement);
    }

    /**
     * Whether the caller asked for an ORDERED bulk.
     *
     * @return {@code true} for an ordered request; default {@code true}, as in the driver
     */
    public boolean isOrdered() {
        return ordered;
    }

    /**
     * Whether an ordered request runs as the driver's ORDERED bulk exactly as given; default {@code false}.
     * Has no effect on an unordered request.
     *
     * @return {@code true} when an ordered request keeps the driver's strict ORDERED semantics
     */
    public boolean isStrictOrdered() {
        return strictOrdered;
    }

    /**
     * Whether replacements of an {@code _id} that a later full replacement or delete of it in the bulk makes
     * unnecessary are left out of the plan ({@code WriteGuardSettings.lastWriteWins}); default {@code false}. Applies
     * to {@link PlanMode#UNORDERED_ROUNDS} plans only.
     *
     * @return {@code true} when superseded replacements are not sent
     */
    public boolean isLastWriteWins() {
        return lastWriteWins;
    }

    /**
     * When an {@code UpdateManyModel} / {@code DeleteManyModel} whose filter pins {@code _id} is planned and sent as a
     * single-document write.
     *
     * @return the rule; by default {@link SingleDocumentById#never}: the planner does not know the collection (the
     *         guarded collections learn it from the server)
     */
    public SingleDocumentById singleDocumentById() {
        return singleDocumentById;
    }

    /**
     * Where the collection's documents live, asked only when an ordered request repeats a key: it decides how many of
     * the repeated keys' runs share one ORDERED command (see {@link KeyPlacement}).
     *
     * @return the placement; {@link KeyPlacement#unknown()} unless set
     */
    public KeyPlacement keyPlacement() {
        return Objects.requireNonNull(keyPlacement.get(), "keyPlacement supplied null");
    }

    @Override
    public boolean equals(Object o) {
        if (this == o) {
            return true;
        }
        if (!(o instanceof PlanOptions)) {
            return false;
        }
        PlanOptions that = (PlanOptions) o;
        return ordered == that.ordered
                && strictOrdered == that.strictOrdered
                && lastWriteWins == that.lastWriteWins
                && singleDocumentById.equals(that.singleDocumentById)
                && keyPlacement.equals(that.keyPlacement);
    }

    @Override
    public int hashCode() {
        return Objects.hash(ordered, strictOrdered, lastWriteWins, singleDocumentById, keyPlacement);
    }

    @Override
    public String toString() {
        return "PlanOptions{ordered=" + ordered + ", strictOrdered=" + strictOrdered + ", lastWriteWins="
                + lastWriteWins + ", singleDocumentById=" + singleDocumentById + '}';
    }

    /** Builds {@link PlanOptions}. Not thread-safe. */
    public static final class Builder {
        private boolean ordered = true;
        private boolean strictOrdered;
        private boolean lastWriteWins;
        private SingleDocumentById singleDocumentById = NOT_KNOWN;
        private Supplier<KeyPlacement> keyPlacement = UNKNOWN_PLACEMENT;

        private Builder() {}

        /**
         * Where the collection's documents live, read only when an ordered request repeats a key (so a guarded
         * collection learns it from the server only for such a bulk); see {@link KeyPlacement}.
         *
         * @param keyPlacement gives the placement when first needed; default {@link KeyPlacement#unknown()}
         * @return this builder
         * @throws NullPointerException if {@code keyPlacement} is null
         */
        public Builder keyPlacement(Supplier<KeyPlacement> keyPlacement) {
            this.keyPlacement = Objects.requireNonNull(keyPlacement, "keyPlacement");
            return this;
        }

        /**
         * When a multi-document write whose filter pins {@code _id} is sent as a single-document write; see
         * {@link SingleDocumentById}.
         *
         * @param singleDocumentById the rule for the collection; default {@link SingleDocumentById#never}
         * @return this builder
         * @throws NullPointerException if {@code singleDocumentById} is null
         */
        public Builder singleDocumentById(SingleDocumentById singleDocumentById) {
            this.singleDocumentById = Objects.requireNonNull(singleDocumentById, "singleDocumentById");
            return this;
        }

        /**
         * Whether the caller asked for an ORDERED bulk; default {@code true}.
         *
         * @param ordered {@code false} for an unordered request
         * @return this builder
         */
        public Builder ordered(boolean ordered) {
            this.ordered = ordered;
            return this;
        }

        /**
         * Run an ordered request as the driver's ORDERED bulk, exactly as given; default {@code false}.
         *
         * @param strictOrdered {@code true} to keep the driver's ORDERED semantics (and its round trips)
         * @return this builder
         */
        public Builder strictOrdered(boolean strictOrdered) {
            this.strictOrdered = strictOrdered;
            return this;
        }

        /**
         * Leave out replacements of an {@code _id} that a later full replacement ({@code ReplaceOneModel} upsert on
         * exactly {@code {_id: v}}) or delete ({@code DeleteOneModel} on exactly {@code {_id: v}}) of it in the bulk
         * makes unnecessary; default {@code false}.
         *
         * @param lastWriteWins {@code true} to leave superseded replacements out
         * @return this builder
         */
        public Builder lastWriteWins(boolean lastWriteWins) {
            this.lastWriteWins = lastWriteWins;
            return this;
        }

        /**
         * The options set so far.
         *
         * @return new, immutable options
         */
        public PlanOptions build() {
            return new PlanOptions(this);
        }
    }
}
