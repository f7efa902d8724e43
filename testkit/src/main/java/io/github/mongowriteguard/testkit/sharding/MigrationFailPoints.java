package io.github.mongowriteguard.testkit.sharding;

import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;

/**
 * The donor's {@code moveChunkHangAtStep*} fail points, by the server's names (mongodb/mongo
 * {@code src/mongo/db/s/migration_source_manager.cpp}: {@code _moveTimingHelper.done(n)} then
 * {@code moveChunkHangAtStepN.pauseWhileSet()}; the steps as {@code jstests/libs/chunk_manipulation_util.js} names
 * them). A test enables one, starts {@code moveChunk} on another thread, waits until the migration reaches it, acts,
 * and releases it:
 *
 * <pre>{@code
 * try (MigrationFailPoints.Hang hang = cluster.migrationFailPoints().enable("moveChunkHangAtStep5")) {
 *     CompletableFuture<ChunkMigration> move = CompletableFuture.supplyAsync(() -> cluster.moveChunk(ns, doc, "shard01"));
 *     hang.awaitReached(Duration.ofSeconds(10));   // in the critical section: writes to the collection wait
 *     ...
 * }                                                // released: the migration commits
 * }</pre>
 *
 * <ul>
 *   <li>{@code moveChunkHangAtStep2}: the migration is set up (the donor checked its metadata);</li>
 *   <li>{@code moveChunkHangAtStep3}: the recipient cloned the chunk's documents; writes still go to the donor;</li>
 *   <li>{@code moveChunkHangAtStep4}: the recipient caught up ("steady"), just before the critical section;</li>
 *   <li>{@code moveChunkHangAtStep5}: inside the critical section, after the recipient received the last changes and
 *       the sessions' history, before the commit on the config server: writes to the collection on the donor wait;</li>
 *   <li>{@code moveChunkHangAtStep6}: committed and out of the critical section, before the donor's orphans are
 *       deleted.</li>
 * </ul>
 *
 * <p>A real cluster has these per donor mongod; the emulated cluster has one set for all its migrations.
 */
public final class MigrationFailPoints {
    /** The fail points a migration passes, in order. */
    public static final List<String> NAMES = List.of(
            "moveChunkHangAtStep2",
            "moveChunkHangAtStep3",
            "moveChunkHangAtStep4",
            "moveChunkHangAtStep5",
            "moveChunkHangAtStep6");

    private final Map<String, Hang> enabled = new ConcurrentHashMap<>();

    /**
     * Turns a fail point on ({@code mode: "alwaysOn"}) until the returned hang is released.
     *
     * @param name one of {@link #NAMES}
     * @return the hang, to wait for and release
     * @throws IllegalArgumentException for another name
     * @throws IllegalStateException when it is already on
     */
    public Hang enable(String name) {
        if (!NAMES.contains(name)) {
            throw new IllegalArgumentException("no migration fail point " + name + "; the fail points are " + NAMES);
        }
        Hang hang = new Hang(name);
        if (enabled.putIfAbsent(name, hang) != null) {
            throw new IllegalStateException(name + " is already on; release it first");
        }
        return hang;
    }

    /** The migration's {@code pauseWhileSet()} at {@code name}. */
    void pauseWhileSet(String name) {
        Hang hang = enabled.get(name);
        if (hang != null) {
            hang.pause();
        }
    }

    /** A fail point that is on: a migration reaching it waits until {@link #release()}. */
    public final class Hang implements AutoCloseable {
        private final String name;
        private final CountDownLatch reached = new CountDownLatch(1);
        private final CountDownLatch released = new CountDownLatch(1);

        private Hang(String name) {
            this.name = name;
        }

        /**
         * Waits until a migration reaches the fail point.
         *
         * @param timeout the longest wait
         * @return whether one reached it in time
         */
        public boolean awaitReached(Duration timeout) {
            try {
                return reached.await(timeout.toNanos(), TimeUnit.NANOSECONDS);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                return false;
            }
        }

        /** Turns the fail point off ({@code mode: "off"}): the waiting migration goes on. Idempotent. */
        public void release() {
            enabled.remove(name, this);
            released.countDown();
        }

        @Override
        public void close() {
            release();
        }

        private void pause() {
            reached.countDown();
            try {
                released.await();
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }

        @Override
        public String toString() {
            return name + (released.getCount() == 0 ? " (off)" : reached.getCount() == 0 ? " (reached)" : " (on)");
        }
    }
}
