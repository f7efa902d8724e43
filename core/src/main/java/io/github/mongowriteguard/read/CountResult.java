package io.github.mongowriteguard.read;

import java.util.Optional;
import org.jspecify.annotations.Nullable;

/** A count and whether it is exact; see {@link CountAccuracy}. */
public final class CountResult {
    private final long count;
    private final @Nullable Approximation approximation;

    CountResult(long count, @Nullable Approximation approximation) {
        this.count = count;
        this.approximation = approximation;
    }

    /** {@return the count} */
    public long count() {
        return count;
    }

    /** {@return true when the count was read with {@code readConcern: "available"} and may be off} */
    public boolean isApproximate() {
        return approximation != null;
    }

    /**
     * Why the count is approximate; empty for an exact count.
     *
     * @return the approximation, or empty
     */
    public Optional<Approximation> approximation() {
        return Optional.ofNullable(approximation);
    }

    @Override
    public String toString() {
        return "CountResult{" + count + ", " + (approximation == null ? "exact" : approximation) + "}";
    }
}
