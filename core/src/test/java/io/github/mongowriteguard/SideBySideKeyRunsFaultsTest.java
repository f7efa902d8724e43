package io.github.mongowriteguard;

import static io.github.mongowriteguard.SideBySideKeyRunsTest.HASHED_ID;
import static io.github.mongowriteguard.SideBySideKeyRunsTest.SHARDS;
import static io.github.mongowriteguard.SideBySideKeyRunsTest.cluster;
import static io.github.mongowriteguard.SideBySideKeyRunsTest.events;
import static io.github.mongowriteguard.SideBySideKeyRunsTest.failNextUpdate;
import static io.github.mongowriteguard.SideBySideKeyRunsTest.ordered;
import static io.github.mongowriteguard.SideBySideKeyRunsTest.shardOf;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowable;

import io.github.mongowriteguard.exception.WriteOutcomeUnknownException;
import io.github.mongowriteguard.outcome.IndexOutcome;
import io.github.mongowriteguard.outcome.WriteOutcome;
import io.github.mongowriteguard.outcome.WriteStatus;
import io.github.mongowriteguard.retry.RetryPolicy;
import io.github.mongowriteguard.testkit.EmulatedShardedCluster;
import java.util.Set;
import java.util.TreeSet;
import org.bson.Document;
import org.junit.jupiter.api.Test;

/**
 * Faults while a round's per-shard ORDERED commands go side by side ({@link SideBySideKeyRunsTest}): an error or a
 * retryable error on one shard, a command that fails as a whole, a stalled shard, an interrupted caller. Each shard's
 * command ends on its own; a command whose outcome the guard cannot know leaves its writes UNKNOWN, never "not
 * applied", and the call's exception carries them.
 */
class SideBySideKeyRunsFaultsTest {

    @Test
    void anErrorOnOneShard_failsThatShardsFirstWriteOnly_theOtherShardsApply() {
        try (EmulatedShardedCluster cluster = cluster();
                GuardFixture fixture = new GuardFixture(cluster.connectionString(), 30_000)) {
            cluster.shardCollection("db.events", HASHED_ID);
            GuardedCollection<Document> events =
                    fixture.wrap(fixture.client.getDatabase("db").getCollection("events"));
            String failingShard = cluster.shardNames().get(1);
            int firstKeyThere = 0;
            while (!shardOf(cluster, "db.events", firstKeyThere).equals(failingShard)) {
                firstKeyThere++;
            }
            failNextUpdate(cluster, failingShard, "errorCode: 2");

            WriteOutcome<Document> outcome = events.execute(events(1_000, 100, Set.of()), ordered());

            for (int i = 0; i < 1_000; i++) {
                WriteStatus expected = i % 100 != firstKeyThere
                        ? WriteStatus.APPLIED
                        : i == firstKeyThere ? WriteStatus.FAILED : WriteStatus.SKIPPED;
                assertThat(outcome.outcome(i).status()).as("index %d", i).isEqualTo(expected);
            }
            assertThat(outcome.outcome(firstKeyThere).errorCode()).isEqualTo(2);
            assertThat(events.unwrap().countDocuments(new Document("n", 10))).isEqualTo(99);
        }
    }

    @Test
    void aRetryableErrorOnOneShard_isRetriedByMongos_andEveryWriteApplies() {
        try (EmulatedShardedCluster cluster = cluster();
                GuardFixture fixture = new GuardFixture(cluster.connectionString(), 30_000)) {
            cluster.shardCollection("db.events", HASHED_ID);
            GuardedCollection<Document> events =
                    fixture.wrap(fixture.client.getDatabase("db").getCollection("events"));
            failNextUpdate(cluster, cluster.shardNames().get(2), "errorCode: 91, errorLabels: ['RetryableWriteError']");

            cluster.routing().reset();
            WriteOutcome<Document> outcome = events.execute(events(1_000, 100, Set.of()), ordered());

            assertThat(outcome.isComplete()).isTrue();
            assertThat(cluster.routing().shardRetries()).as("the fault fired").isEqualTo(1);
            assertThat(events.unwrap().countDocuments(new Document("n", 10))).isEqualTo(100);
        }
    }

    /**
     * A command that fails as a whole stops the call after its round of side-by-side commands: the other shards'
     * commands were sent beside it, and the outcome says what they did (sent one after another, the commands after
     * the failed one would have been SKIPPED, not sent). Which command mongos fails is whichever reaches it first.
     */
    @Test
    void aWholeCommandFailure_stopsTheCall_theCommandsSentBesideItAreRecordedAsTheyRan() {
        try (EmulatedShardedCluster cluster = cluster();
                GuardFixture fixture = new GuardFixture(cluster.connectionString(), 30_000)) {
            cluster.shardCollection("db.events", HASHED_ID);
            GuardedCollection<Document> events =
                    fixture.wrap(fixture.client.getDatabase("db").getCollection("events"));
            fixture.client
                    .getDatabase("admin")
                    .runCommand(Document.parse("{configureFailPoint: 'failCommand', mode: {times: 1},"
                            + " data: {failCommands: ['update'], errorCode: 2}}"));

            WriteOutcome<Document> outcome = events.execute(events(1_000, 100, Set.of()), ordered());

            Set<String> failedShards = new TreeSet<>();
            for (int i = 0; i < 100; i++) {
                if (outcome.outcome(i).status() == WriteStatus.FAILED) {
                    failedShards.add(shardOf(cluster, "db.events", i));
                }
            }
            assertThat(failedShards).as("the one command mongos failed").hasSize(1);
            String failed = failedShards.iterator().next();
            int applied = 0;
            for (int i = 0; i < 1_000; i++) {
                IndexOutcome written = outcome.outcome(i);
                Document document =
                        events.unwrap().find(new Document("_id", i % 100)).first();
                if (shardOf(cluster, "db.events", i % 100).equals(failed)) {
                    assertThat(written.status()).as("index %d", i).isEqualTo(WriteStatus.FAILED);
                    assertThat(written.errorCode()).isEqualTo(2);
                    assertThat(document).as("key %d", i % 100).isNull();
                } else {
                    assertThat(written.status()).as("index %d", i).isEqualTo(WriteStatus.APPLIED);
                    assertThat(document).isEqualTo(new Document("_id", i % 100).append("n", 10));
                    applied++;
                }
            }
            assertThat(applied).isPositive();
            assertThat(outcome.commands()).isEqualTo(SHARDS);
        }
    }

    @Test
    void aStalledShard_leavesItsCommandsWritesUnknown_theOtherShardsApplied_andTheExceptionCarriesThem() {
        try (EmulatedShardedCluster cluster = cluster();
                GuardFixture fixture = withoutRetries(cluster, 5_000)) {
            cluster.shardCollection("db.events", HASHED_ID);
            GuardedCollection<Document> events =
                    fixture.wrap(fixture.client.getDatabase("db").getCollection("events"));
            String stalled = cluster.shardNames().get(0);
            failNextUpdate(cluster, stalled, "blockConnection: true, blockTimeMS: 8000");

            Throwable thrown = catchThrowable(() -> events.bulkWrite(events(1_000, 100, Set.of()), ordered()));

            assertThat(thrown).isInstanceOf(WriteOutcomeUnknownException.class);
            WriteOutcome<?> outcome = ((WriteOutcomeUnknownException) thrown).outcome();
            // mongos answers the stalled shard's child batch at its own deadline, below the socket timeout
            // (async_requests_sender.cpp, batch_write_exec.cpp: write error 50 "Write results unavailable"); the shard
            // may still apply it.
            assertUnknownExactlyOn(
                    cluster,
                    outcome,
                    stalled::equals,
                    "mongos answered MaxTimeMSExpired (50: Write results unavailable from ");
            assertThat(outcome.copies()).hasSize(SHARDS);
        }
    }

    @Test
    void anInterruptedCaller_leavesTheCommandsStillBeingSentUnknown_neverNotApplied() throws InterruptedException {
        try (EmulatedShardedCluster cluster = cluster();
                GuardFixture fixture = withoutRetries(cluster, 30_000)) {
            cluster.shardCollection("db.events", HASHED_ID);
            GuardedCollection<Document> events =
                    fixture.wrap(fixture.client.getDatabase("db").getCollection("events"));
            // The calling thread sends the first shard's command (shards are numbered by name: shard00's); the
            // others, on the guard's threads, stall on their shards.
            String answering = cluster.shardNames().get(0);
            cluster.shardNames().stream()
                    .filter(shard -> !shard.equals(answering))
                    .forEach(shard -> failNextUpdate(cluster, shard, "blockConnection: true, blockTimeMS: 5000"));
            java.util.concurrent.atomic.AtomicReference<Object> ended =
                    new java.util.concurrent.atomic.AtomicReference<>();
            java.util.concurrent.atomic.AtomicBoolean stillInterrupted =
                    new java.util.concurrent.atomic.AtomicBoolean();
            Thread caller = new Thread(() -> {
                try {
                    ended.set(events.execute(events(1_000, 100, Set.of()), ordered()));
                } catch (RuntimeException e) {
                    ended.set(e);
                }
                stillInterrupted.set(Thread.currentThread().isInterrupted());
            });
            caller.start();
            long giveUp = System.nanoTime() + java.util.concurrent.TimeUnit.SECONDS.toNanos(30);
            while (!waitsForTheGuardsThreads(caller) && System.nanoTime() < giveUp) {
                Thread.sleep(5);
            }
            assertThat(waitsForTheGuardsThreads(caller))
                    .as("the caller waits for the other shards' sends")
                    .isTrue();
            caller.interrupt();
            caller.join();

            assertThat(ended.get()).isInstanceOf(WriteOutcome.class);
            assertUnknownExactlyOn(
                    cluster, (WriteOutcome<?>) ended.get(), shard -> !shard.equals(answering), "interrupted");
            assertThat(stillInterrupted)
                    .as("the interrupt is kept for the caller")
                    .isTrue();
        }
    }

    private static GuardFixture withoutRetries(EmulatedShardedCluster cluster, int socketTimeoutMs) {
        return new GuardFixture(
                cluster.connectionString(),
                WriteGuardSettings.builder().retryPolicy(RetryPolicy.none()).build(),
                socketTimeoutMs,
                b -> {});
    }

    /**
     * Every write of {@code events(1_000, 100)} on a shard {@code unknownOn} names is UNKNOWN, saying {@code why};
     * every other is APPLIED.
     */
    private static void assertUnknownExactlyOn(
            EmulatedShardedCluster cluster,
            WriteOutcome<?> outcome,
            java.util.function.Predicate<String> unknownOn,
            String why) {
        Set<Integer> unknownKeys = new TreeSet<>();
        for (int i = 0; i < 1_000; i++) {
            IndexOutcome written = outcome.outcome(i);
            if (unknownOn.test(shardOf(cluster, "db.events", i % 100))) {
                assertThat(written.status()).as("index %d: %s", i, written).isEqualTo(WriteStatus.UNKNOWN);
                assertThat(written.message()).contains(why);
                unknownKeys.add(i % 100);
            } else {
                assertThat(written.status()).as("index %d: %s", i, written).isEqualTo(WriteStatus.APPLIED);
            }
        }
        assertThat(unknownKeys).isNotEmpty();
    }

    /** Whether {@code thread} is parked waiting for a send on the guard's threads. */
    private static boolean waitsForTheGuardsThreads(Thread thread) {
        StackTraceElement[] stack = thread.getStackTrace();
        boolean inSideBySide = false;
        boolean inFutureGet = false;
        for (StackTraceElement frame : stack) {
            inSideBySide |= frame.getClassName().endsWith(".SideBySideSends");
            inFutureGet |= frame.getClassName().equals("java.util.concurrent.CompletableFuture")
                    && (frame.getMethodName().equals("get")
                            || frame.getMethodName().equals("waitingGet"));
        }
        return inSideBySide && inFutureGet && thread.getState() == Thread.State.WAITING;
    }
}
