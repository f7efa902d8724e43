package io.github.mongowriteguard.faults;

import java.util.ArrayList;
import java.util.Collection;
import java.util.Comparator;
import java.util.List;
import java.util.concurrent.ConcurrentLinkedQueue;

/**
 * The intended effects of a run and what the writer claimed about each: one {@link Entry} per write, recorded as each
 * operation returns. The checks compare it with the documents after quiescence.
 */
public final class Ledger {
    /**
     * What the caller was told about one write.
     *
     * @param write             the write
     * @param operation         the call it belonged to
     * @param order             the client's running number of the call (replacements of a key are checked in it)
     * @param claim             applied, not applied, partially, or unknown
     * @param retrySafe         the guard's {@code retrySafe()} (always false for the raw driver, which says nothing)
     * @param writeConcernError an APPLIED claim that came with a write-concern error (not confirmed durable)
     * @param detail            the status and message, for the report
     */
    public record Entry(
            Write write,
            Operation operation,
            int order,
            Claim claim,
            boolean retrySafe,
            boolean writeConcernError,
            String detail) {}

    private final Collection<Entry> entries = new ConcurrentLinkedQueue<>();

    public void record(Entry entry) {
        entries.add(entry);
    }

    /** Every entry, by client and order. */
    public List<Entry> entries() {
        List<Entry> sorted = new ArrayList<>(entries);
        sorted.sort(Comparator.comparingInt((Entry e) -> e.operation().client())
                .thenComparingInt(Entry::order)
                .thenComparing(e -> e.write().tag()));
        return sorted;
    }

    public int size() {
        return entries.size();
    }
}
