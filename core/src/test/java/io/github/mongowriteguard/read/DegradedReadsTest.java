package io.github.mongowriteguard.read;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.github.mongowriteguard.exception.ExactReadUnavailableException;
import io.github.mongowriteguard.outcome.StaleReadDiagnosis;
import io.github.mongowriteguard.testkit.sharding.ChunkMigration;
import io.github.mongowriteguard.testkit.stall.StallHandle;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneId;
import java.time.ZoneOffset;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import org.bson.BsonDocument;
import org.bson.Document;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * Seed part 6 with the guarded reads: a restarted secondary of a shard whose primary cannot write answers only
 * approximately, flagged so, without duplicate {@code _id}s even while a migration has left orphans.
 */
class DegradedReadsTest {
    private SeedPart6Cluster seed;

    @AfterEach
    void close() {
        if (seed != null) {
            seed.close();
        }
    }

    private static ReadGuardOptions.Builder degraded(Clock clock) {
        return ReadGuardOptions.builder()
                .degradedReads(true)
                .normalReadTimeout(Duration.ofMillis(600))
                .degradedReadTimeout(Duration.ofSeconds(5))
                .clock(clock);
    }

    @Test
    void restartedSecondary_primaryWritesStalled_answersApproximately_withoutDuplicateIds_despiteOrphans() {
        seed = new SeedPart6Cluster(10);
        ChunkMigration migration = seed.cluster.moveChunk(
                SeedPart6Cluster.NS, BsonDocument.parse(seed.onShardA().toJson()), "shard01");
        seed.shardA.restart(seed.a1);
        Recording listener = new Recording();
        MutableClock clock = new MutableClock();
        GuardedReads<Document> reads = GuardedReads.wrap(
                seed.inventory.withReadPreference(SeedPart6Cluster.aimedAt("a1")),
                degraded(clock).listener(listener).build());

        try (StallHandle stalled = seed.shardA.stallPrimaryWrites()) {
            ReadResult<Document> screen = reads.find(new Document());

            assertThat(screen.isApproximate()).isTrue();
            assertThat(screen.size()).isEqualTo(2_000);
            assertThat(screen.documents().stream()
                            .map(d -> d.get("_id"))
                            .distinct()
                            .count())
                    .isEqualTo(2_000);
            Approximation approximation = screen.approximation().orElseThrow();
            assertThat(approximation.reason()).isEqualTo(ApproximationReason.NORMAL_READ_FAILED);
            assertThat(approximation.duplicatesRemoved())
                    .isEqualTo(migration.movedIds().size())
                    .isPositive();
            assertThat(approximation.conflictingDuplicates()).isZero();
            assertThat(listener.timeouts).hasSize(1);
            assertThat(listener.degraded).singleElement().satisfies(e -> {
                assertThat(e.documents()).isEqualTo(2_000);
                assertThat(e.duplicatesRemoved()).isEqualTo(migration.movedIds().size());
            });

            // Right after a failure the exact read is expected to fail: no second wait for it.
            ReadResult<Document> again = reads.find(new Document());
            assertThat(again.approximation().orElseThrow().reason())
                    .isEqualTo(ApproximationReason.NORMAL_READ_EXPECTED_TO_FAIL);
            assertThat(listener.timeouts).hasSize(1);
        }

        clock.advance(Duration.ofSeconds(31));
        ReadResult<Document> resumed = reads.find(new Document());
        assertThat(resumed.isApproximate()).isFalse();
        assertThat(resumed.size()).isEqualTo(2_000);
    }

    @Test
    void whenMongosGivesUp_theStaleConfigNamesTheShard_andTheDiagnosisSaysWhyAndWarnsAgainstRestarts() {
        seed = new SeedPart6Cluster(1);
        seed.shardA.restart(seed.a1);
        GuardedReads<Document> reads = GuardedReads.wrap(
                seed.inventory.withReadPreference(SeedPart6Cluster.aimedAt("a1")),
                ReadGuardOptions.builder()
                        .normalReadTimeout(Duration.ofSeconds(10))
                        .build());

        try (StallHandle stalled = seed.shardA.stallPrimaryWrites()) {
            assertThatThrownBy(
                            () -> reads.find(new Document("_id", seed.onShardA().get("_id"))))
                    .isInstanceOfSatisfying(ExactReadUnavailableException.class, e -> {
                        assertThat(e.getCause()).isInstanceOf(com.mongodb.MongoCommandException.class);
                        assertThat(e.diagnosis().cause()).isEqualTo(StaleReadDiagnosis.Cause.STALE_ROUTING_METADATA);
                        assertThat(e.diagnosis().shard()).isEqualTo("shard00");
                    });
            reads.reportPrimaryNotAcceptingWrites("shard00");
            StaleReadDiagnosis diagnosis = reads.diagnose();

            assertThat(diagnosis.cause()).isEqualTo(StaleReadDiagnosis.Cause.SECONDARY_CANNOT_REFRESH);
            assertThat(diagnosis.node()).isEqualTo("secondary [node:a1, any]");
            assertThat(diagnosis.message())
                    .contains(
                            "shard shard00",
                            "node:a1",
                            "StaleConfig (13388)",
                            "is not completing writes",
                            "Do not restart secondaries");
        }
    }

    @Test
    void countsMustAddUp_soTheyNeverDegrade_unlessTheCallerAsks() {
        seed = new SeedPart6Cluster(10);
        ChunkMigration migration = seed.cluster.moveChunk(
                SeedPart6Cluster.NS, BsonDocument.parse(seed.onShardA().toJson()), "shard01");
        seed.shardA.restart(seed.a1);
        GuardedReads<Document> reads = GuardedReads.wrap(
                seed.inventory.withReadPreference(SeedPart6Cluster.aimedAt("a1")),
                degraded(new MutableClock()).expectFailureFor(Duration.ZERO).build());

        try (StallHandle stalled = seed.shardA.stallPrimaryWrites()) {
            assertThatThrownBy(() -> reads.countExact(new Document()))
                    .isInstanceOf(ExactReadUnavailableException.class);
            assertThatThrownBy(() -> reads.count(new Document(), CountAccuracy.EXACT))
                    .isInstanceOf(ExactReadUnavailableException.class);

            CountResult approximate = reads.count(new Document(), CountAccuracy.APPROXIMATE_ALLOWED);
            assertThat(approximate.isApproximate()).isTrue();
            assertThat(approximate.count()).isEqualTo(2_000);
            assertThat(approximate.approximation().orElseThrow().duplicatesRemoved())
                    .isEqualTo(migration.movedIds().size());
        }
    }

    @Test
    void withoutDegradedReads_aFailingReadThrows_withTheDiagnosis() {
        seed = new SeedPart6Cluster(10);
        seed.shardA.restart(seed.a1);
        GuardedReads<Document> reads = GuardedReads.wrap(
                seed.inventory.withReadPreference(SeedPart6Cluster.aimedAt("a1")),
                ReadGuardOptions.builder()
                        .normalReadTimeout(Duration.ofMillis(400))
                        .build());
        try (StallHandle stalled = seed.shardA.stallPrimaryWrites()) {
            assertThatThrownBy(() -> reads.find(new Document()))
                    .isInstanceOfSatisfying(ExactReadUnavailableException.class, e -> {
                        assertThat(e.getCause()).isInstanceOf(com.mongodb.MongoExecutionTimeoutException.class);
                        assertThat(e.diagnosis().cause()).isEqualTo(StaleReadDiagnosis.Cause.READ_TIMEOUTS);
                        assertThat(e.getMessage()).contains("demo.store_inventory", "time out");
                    });
        }
    }

    @Test
    void healthyCluster_readsAreExact_andAThrowingListenerBreaksNothing() {
        seed = new SeedPart6Cluster(10);
        GuardedReads<Document> reads = GuardedReads.wrap(
                seed.inventory.withReadPreference(SeedPart6Cluster.aimedAt("a1")),
                degraded(new MutableClock())
                        .listener(new ReadGuardListener() {
                            @Override
                            public void degradedRead(ReadGuardListener.DegradedReadEvent event) {
                                throw new IllegalStateException("listener bug");
                            }
                        })
                        .build());

        ReadResult<Document> all = reads.find(new Document());
        assertThat(all.isApproximate()).isFalse();
        assertThat(all.approximation()).isEmpty();
        assertThat(all.size()).isEqualTo(2_000);
        assertThat(reads.countExact(new Document("qty", 10))).isEqualTo(2_000);
        assertThat(reads.diagnose().cause()).isEqualTo(StaleReadDiagnosis.Cause.NONE);

        seed.shardA.restart(seed.a1);
        try (StallHandle stalled = seed.shardA.stallPrimaryWrites()) {
            assertThat(reads.find(new Document()).isApproximate()).isTrue();
        }
    }

    static final class Recording implements ReadGuardListener {
        final List<ReadGuardListener.StaleConfigEvent> stale = new CopyOnWriteArrayList<>();
        final List<ReadGuardListener.ReadTimeoutEvent> timeouts = new CopyOnWriteArrayList<>();
        final List<ReadGuardListener.DegradedReadEvent> degraded = new CopyOnWriteArrayList<>();

        @Override
        public void staleConfig(ReadGuardListener.StaleConfigEvent event) {
            stale.add(event);
        }

        @Override
        public void readTimedOut(ReadGuardListener.ReadTimeoutEvent event) {
            timeouts.add(event);
        }

        @Override
        public void degradedRead(ReadGuardListener.DegradedReadEvent event) {
            degraded.add(event);
        }
    }

    static final class MutableClock extends Clock {
        private volatile Instant now = Instant.parse("2026-01-01T00:00:00Z");

        void advance(Duration duration) {
            now = now.plus(duration);
        }

        @Override
        public ZoneId getZone() {
            return ZoneOffset.UTC;
        }

        @Override
        public Clock withZone(ZoneId zone) {
            return this;
        }

        @Override
        public Instant instant() {
            return now;
        }
    }
}
