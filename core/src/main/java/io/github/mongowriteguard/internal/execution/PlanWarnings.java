package io.github.mongowriteguard.internal.execution;

import io.github.mongowriteguard.bulk.PlanMode;
import io.github.mongowriteguard.internal.plan.PlannedBulk;
import java.time.Duration;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.BooleanSupplier;
import java.util.function.Consumer;
import java.util.function.LongSupplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Says at WARN when a guarded bulk does not get what the guard is for: the caller's ORDERED bulk runs as given (about
 * one mongos round trip per change of shard, ~800 for 1,000 writes on 5 shards), or a write is sent multi-document,
 * so that no resend can be the same server copy. At most one line per namespace, plan mode and reason every
 * {@link #INTERVAL}, with the number of such plans since the last line. The line names the first such write's index
 * and kind and what would make it keyed; never a document, filter or value.
 */
public final class PlanWarnings {
    /** The shortest time between two lines for one namespace, mode and reason. */
    public static final Duration INTERVAL = Duration.ofMinutes(1);

    /** The most namespace, mode and reason slots kept; past it they start again (a line may then come early). */
    public static final int MAX_SLOTS = 4096;

    private static final Logger log = LoggerFactory.getLogger(PlanWarnings.class);

    private static final class Slot {
        volatile long lastNanos;
        volatile boolean logged;
        final AtomicLong since = new AtomicLong();
    }

    private final ConcurrentHashMap<String, Slot> slots = new ConcurrentHashMap<>();
    private final LongSupplier nanoClock;
    private final BooleanSupplier enabled;
    private final Consumer<String> warn;

    public PlanWarnings() {
        this(System::nanoTime, log::isWarnEnabled, log::warn);
    }

    PlanWarnings(LongSupplier nanoClock, BooleanSupplier enabled, Consumer<String> warn) {
        this.nanoClock = nanoClock;
        this.enabled = enabled;
        this.warn = warn;
    }

    /** How many namespace, mode and reason slots are kept now. */
    public int size() {
        return slots.size();
    }

    /**
     * Logs the plan when it deserves a warning and none was logged for its namespace, mode and reason recently.
     *
     * @return the line logged, or null
     */
    String note(String namespace, PlannedBulk plan) {
        return note(namespace, plan, false);
    }

    /**
     * As {@link #note(String, PlannedBulk)}, for a call that opted in to retrying its multi-document writes as new copies
     * ({@code withIdempotentMultiDocumentRetries()}): its line says so instead of "never retried".
     *
     * @return the line logged, or null
     */
    String note(String namespace, PlannedBulk plan, boolean multiRetriesOptedIn) {
        String reason = plan.reasonTag();
        if (reason.equals("none") || plan.isEmpty() || !enabled.getAsBoolean()) {
            return null;
        }
        if (plan.mode() == PlanMode.PRESERVE_ORDER && plan.size() == 1 && plan.firstMultiDocument() < 0) {
            return null; // one single-document write as given: what rounds would do, with same-copy retries
        }
        // A bulk run as given (its round-trip cost) and a lone multi-document write (no same-copy retries) are two
        // different lines: one must never silence the other.
        boolean bulkAsGiven = plan.mode() != PlanMode.UNORDERED_ROUNDS && plan.size() > 1;
        if (slots.size() >= MAX_SLOTS) {
            slots.clear(); // many namespaces: start again rather than grow without bound
        }
        Slot slot = slots.computeIfAbsent(
                namespace
                        + '\u0000'
                        + plan.mode()
                        + '\u0000'
                        + reason
                        + '\u0000'
                        + bulkAsGiven
                        + '\u0000'
                        + multiRetriesOptedIn,
                key -> new Slot());
        long similar = slot.since.incrementAndGet();
        long now = nanoClock.getAsLong();
        synchronized (slot) {
            if (slot.logged && now - slot.lastNanos < INTERVAL.toNanos()) {
                return null;
            }
            slot.logged = true;
            slot.lastNanos = now;
            slot.since.addAndGet(-similar);
        }
        String line = line(namespace, plan, reason, similar, multiRetriesOptedIn);
        warn.accept(line);
        return line;
    }

    static String line(String namespace, PlannedBulk plan, String reason, long similar, boolean multiRetriesOptedIn) {
        StringBuilder text = new StringBuilder("mongo-write-guard: ");
        if (plan.mode() == PlanMode.STRICT_ORDERED) {
            text.append("an ordered bulk of ")
                    .append(plan.size())
                    .append(" writes on ")
                    .append(namespace)
                    .append(" ran as the driver's ORDERED bulk, as given, because strictOrdered is set");
        } else {
            // One write as given is the same as one write in a round: only its multi-document form matters then.
            boolean asGiven = plan.mode() == PlanMode.PRESERVE_ORDER && plan.size() > 1;
            int first = asGiven ? plan.firstUnkeyed() : plan.firstMultiDocument();
            if (asGiven) {
                text.append("an ordered bulk of ")
                        .append(plan.size())
                        .append(" writes on ")
                        .append(namespace)
                        .append(" ran as the driver's ORDERED bulk, as given (")
                        .append(reason)
                        .append("): write ");
            } else {
                text.append("a write on ")
                        .append(namespace)
                        .append(" is sent multi-document, so a resend after a timeout cannot be the same server copy ")
                        .append(
                                multiRetriesOptedIn
                                        ? "and it is retried (withIdempotentMultiDocumentRetries) only as a new copy,"
                                                + " after the overlap gate saw the earlier one end ("
                                        : "and it is never retried (")
                        .append(reason)
                        .append("): write ");
            }
            text.append(first)
                    .append(" (")
                    .append(plan.kind(first).modelName())
                    .append(") ")
                    .append(plan.unkeyedBecause(first).orElse(""))
                    .append("; to make it keyed: ")
                    .append(plan.keyedIf(first).orElse(""));
        }
        if (plan.mode() != PlanMode.UNORDERED_ROUNDS && plan.size() > 1) {
            text.append(String.format(
                    "; through mongos an ORDERED bulk costs about one round trip per change of shard (for example"
                            + " %,.0f for these %,d writes if the collection were hashed over 5 shards) where rounds"
                            + " cost one per round; make the bulk unordered, or key every write by _id",
                    plan.expectedRoundTrips(5), plan.size()));
        }
        if (similar > 1) {
            text.append(" (").append(similar).append(" such bulks since the last line)");
        }
        return text.toString();
    }
}
