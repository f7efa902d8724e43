package io.github.mongowriteguard;

import java.util.concurrent.Executor;
import reactor.core.scheduler.Scheduler;
import reactor.core.scheduler.Schedulers;

/**
 * The guard's own threads for reactive calls: one bounded scheduler per JVM (Reactor's bounded elastic, daemon
 * threads named {@code mongo-write-guard-reactive-*}, idle ones gone after 60 s), made when the first reactive call
 * runs. A call waits there for the driver's replies, backoffs and the overlap gate, so that no driver thread and no
 * subscriber's thread ever waits.
 */
final class ReactiveGuardThreads {
    static final String PREFIX = "mongo-write-guard-reactive";

    static final Scheduler SCHEDULER = Schedulers.newBoundedElastic(
            Schedulers.DEFAULT_BOUNDED_ELASTIC_SIZE, Schedulers.DEFAULT_BOUNDED_ELASTIC_QUEUESIZE, PREFIX, 60, true);

    static final Executor EXECUTOR = task -> SCHEDULER.schedule(task);

    private ReactiveGuardThreads() {}
}
