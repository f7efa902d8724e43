package io.github.mongowriteguard.internal.execution;

import io.github.mongowriteguard.internal.CallObserver;
import io.github.mongowriteguard.internal.GuardTime;
import io.github.mongowriteguard.internal.Retryable;
import io.github.mongowriteguard.internal.ServerTracker;
import io.github.mongowriteguard.internal.copies.LiveCopyLedger;
import io.github.mongowriteguard.internal.copies.OverlapGate;
import io.github.mongowriteguard.metrics.GuardEventListener;
import io.github.mongowriteguard.retry.RetryPolicy;
import io.github.resilience4j.retry.Retry;
import java.util.List;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * What every collection of one guard shares: its settings, the server tracker it registered, the copy ledger, the
 * overlap gate, the resilience4j {@link Retry} that paces attempts, the call observer (one Observation per call when
 * the guard has an ObservationRegistry), and the event listeners (each call guarded, so a listener that throws never
 * breaks a write).
 */
public final class GuardRuntime {
    /**
     * What of the guard's settings its executors read, taken from {@code WriteGuardSettings} by the entry point.
     *
     * @param retryPolicy           the retry policy (attempts, backoff, the overlap gate's grace)
     * @param parallelShardCommands how many per-shard commands of one call are sent side by side
     * @param strictOrdered         whether ORDERED bulks run as given
     * @param lastWriteWins         whether a bulk's last write of a key decides it
     */
    public record Settings(
            RetryPolicy retryPolicy, int parallelShardCommands, boolean strictOrdered, boolean lastWriteWins) {}

    private static final Logger log = LoggerFactory.getLogger(GuardRuntime.class);

    private final Settings settings;
    private final ServerTracker servers;
    private final LiveCopyLedger ledger;
    private final OverlapGate gate;
    private final Retry retry;
    private final GuardTime time;
    private final GuardEventListener events;
    /** Whether any listener (the guard's meters are one) hears the events: without one none is built. */
    private final boolean listening;

    private final CallObserver observer;
    private final SingleDocumentRules singleDocumentRules = new SingleDocumentRules();
    private final KeyPlacements keyPlacements = new KeyPlacements();
    /** The threads that send one call's per-shard commands side by side (none with parallelShardCommands 1). */
    private final SideBySideSends sideBySide;

    private final PlanWarnings planWarnings = new PlanWarnings();

    public GuardRuntime(
            Settings settings,
            ServerTracker servers,
            LiveCopyLedger ledger,
            List<GuardEventListener> listeners,
            CallObserver observer) {
        this(settings, servers, ledger, listeners, observer, GuardTime.SYSTEM);
    }

    /**
     * A runtime whose waits (the retry backoff, the overlap gate) go through {@code time}.
     *
     * @param time the clock and sleeper: {@link GuardTime#SYSTEM} in a guard, a scripted one in a test of the loop
     */
    public GuardRuntime(
            Settings settings,
            ServerTracker servers,
            LiveCopyLedger ledger,
            List<GuardEventListener> listeners,
            CallObserver observer,
            GuardTime time) {
        this.settings = settings;
        this.time = time;
        this.servers = servers;
        this.ledger = ledger;
        this.gate = new OverlapGate(settings.retryPolicy().getGateGrace(), time);
        this.retry = Retry.of(
                "mongodb-write-guard", settings.retryPolicy().<Retryable>toRetryConfig(Retryable::worthRetrying));
        this.events = safe(List.copyOf(listeners));
        this.listening = !listeners.isEmpty();
        this.observer = observer;
        this.sideBySide = new SideBySideSends(settings.parallelShardCommands());
    }

    public SideBySideSends sideBySide() {
        return sideBySide;
    }

    public Settings settings() {
        return settings;
    }

    /** The server of each thread's last send and the servers' wire version, learned without command events. */
    public ServerTracker servers() {
        return servers;
    }

    public LiveCopyLedger ledger() {
        return ledger;
    }

    public OverlapGate gate() {
        return gate;
    }

    /**
     * The retry policy's pacing: {@code retry().asyncContext()} tells each backoff, which the sender waits on
     * {@link #time()}, never inside resilience4j.
     */
    public Retry retry() {
        return retry;
    }

    /** The clock and sleeper of the guard's waits: the retry backoff and the overlap gate. */
    public GuardTime time() {
        return time;
    }

    public GuardEventListener events() {
        return events;
    }

    /**
     * Whether {@link #events()} reaches any listener: the executors build an event only then (a call builds several,
     * and a guard without meters or listeners would build them for nobody).
     */
    public boolean listening() {
        return listening;
    }

    /** What each collection allows for multi-document writes that pin {@code _id}, learned once per namespace. */
    public SingleDocumentRules singleDocumentRules() {
        return singleDocumentRules;
    }

    /** Where each collection's documents live, learned once per namespace for ordered bulks that repeat a key. */
    public KeyPlacements keyPlacements() {
        return keyPlacements;
    }

    /** The rate-limited WARN lines for bulks run as given or sent without same-copy retries. */
    public PlanWarnings planWarnings() {
        return planWarnings;
    }

    /** Runs each guarded call inside a Micrometer Observation when the guard has an ObservationRegistry. */
    public CallObserver observer() {
        return observer;
    }

    /** One listener that calls them all and logs, never throws, what a listener throws. */
    private static GuardEventListener safe(List<GuardEventListener> listeners) {
        return new GuardEventListener() {
            @Override
            public void writeCompleted(WriteCompleted event) {
                each(l -> l.writeCompleted(event));
            }

            @Override
            public void attemptStarted(AttemptStarted event) {
                each(l -> l.attemptStarted(event));
            }

            @Override
            public void deadlineHit(DeadlineHit event) {
                each(l -> l.deadlineHit(event));
            }

            @Override
            public void gateDecided(GateDecided event) {
                each(l -> l.gateDecided(event));
            }

            @Override
            public void planChosen(PlanChosen event) {
                each(l -> l.planChosen(event));
            }

            @Override
            public void orderedBulkRegrouped(OrderedBulkRegrouped event) {
                each(l -> l.orderedBulkRegrouped(event));
            }

            private void each(java.util.function.Consumer<GuardEventListener> call) {
                for (GuardEventListener listener : listeners) {
                    try {
                        call.accept(listener);
                    } catch (RuntimeException e) {
                        log.warn(
                                "mongo-write-guard: event listener {} threw; the write goes on",
                                listener.getClass().getName(),
                                e);
                    }
                }
            }
        };
    }
}
