package io.github.mongowriteguard;

import com.mongodb.connection.ConnectionPoolSettings;
import io.github.mongowriteguard.internal.execution.Resume;
import java.util.concurrent.ThreadFactory;
import java.util.concurrent.atomic.AtomicLong;
import reactor.core.scheduler.Scheduler;
import reactor.core.scheduler.Schedulers;

/**
 * The guard's own threads for reactive calls: one bounded scheduler per JVM (Reactor's bounded elastic, daemon
 * threads named {@code mongo-write-guard-reactive-*}, made when needed, idle ones gone after 60 s), made when the first
 * reactive call runs. A call starts here and continues here after each of the driver's replies and each backoff,
 * holding no thread while they are pending; the parts that still wait on one of these threads (a settle, the overlap gate, the side-by-side commands of ordered key runs, session and catalog reads) hold it for one
 * command at a time, which the client's connection pool bounds too. So no driver thread and no subscriber's thread
 * ever waits.
 */
final class ReactiveGuardThreads {
    static final String PREFIX = "mongo-write-guard-reactive";

    /**
     * At most as many threads as Reactor's default bounded elastic ({@code 10 x} CPU cores) or as the driver's default
     * connection pool has connections ({@code maxSize} 100), whichever is more: a call that waits on a guard thread
     * waits for one command, which needs one of the pool's connections.
     */
    static final int THREADS = Math.max(
            Schedulers.DEFAULT_BOUNDED_ELASTIC_SIZE,
            ConnectionPoolSettings.builder().build().getMaxSize());

    static final Scheduler SCHEDULER = Schedulers.newBoundedElastic(
            THREADS, Schedulers.DEFAULT_BOUNDED_ELASTIC_QUEUESIZE, new GuardThreadFactory(), 60);

    /** The scheduler as the guard's loop uses it: a step that may block runs at once on one of its threads. */
    static final Resume EXECUTOR =
            Resume.of(task -> SCHEDULER.schedule(task), () -> Thread.currentThread() instanceof GuardThread);

    /** A thread of the guard's scheduler, so that the guard's loop knows it may block on it. */
    private static final class GuardThread extends Thread {
        GuardThread(Runnable task, String name) {
            super(task, name);
            setDaemon(true);
        }
    }

    /** Daemon {@link GuardThread}s named {@code mongo-write-guard-reactive-N}. */
    private static final class GuardThreadFactory implements ThreadFactory {
        private final AtomicLong count = new AtomicLong();

        @Override
        public Thread newThread(Runnable task) {
            return new GuardThread(task, PREFIX + "-" + count.incrementAndGet());
        }
    }

    private ReactiveGuardThreads() {}
}
