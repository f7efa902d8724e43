package io.github.mongowriteguard.read;

import java.util.List;
import java.util.Objects;
import java.util.Optional;
import org.jspecify.annotations.Nullable;

/**
 * The documents of a guarded read and whether they are exact. An approximate result says why
 * ({@link #approximation()}); code that needs exact data must check {@link #isApproximate()}.
 *
 * <pre>{@code
 * ReadResult<Document> stock = reads.find(Filters.eq("storeId", 7));
 * if (stock.isApproximate()) {
 *     banner("Stock figures may be out of date: " + stock.approximation().orElseThrow().diagnosis().message());
 * }
 * }</pre>
 *
 * @param <T> the collection's document class
 */
public final class ReadResult<T> {
    private final List<T> documents;
    private final @Nullable Approximation approximation;

    private ReadResult(List<T> documents, @Nullable Approximation approximation) {
        this.documents = List.copyOf(documents);
        this.approximation = approximation;
    }

    static <T> ReadResult<T> exact(List<T> documents) {
        return new ReadResult<>(documents, null);
    }

    static <T> ReadResult<T> approximate(List<T> documents, Approximation approximation) {
        return new ReadResult<>(documents, Objects.requireNonNull(approximation, "approximation"));
    }

    /**
     * The documents, unmodifiable; each {@code _id} at most once in an approximate result.
     *
     * @return the documents
     */
    public List<T> documents() {
        return documents;
    }

    /** {@return the number of documents} */
    public int size() {
        return documents.size();
    }

    /**
     * True when the documents were read with {@code readConcern: "available"} and may be out of date.
     *
     * @return whether the result is approximate
     */
    public boolean isApproximate() {
        return approximation != null;
    }

    /**
     * Why the result is approximate; empty for an exact result.
     *
     * @return the approximation, or empty
     */
    public Optional<Approximation> approximation() {
        return Optional.ofNullable(approximation);
    }

    @Override
    public String toString() {
        return "ReadResult{" + documents.size() + " documents, " + (approximation == null ? "exact" : approximation)
                + "}";
    }
}
