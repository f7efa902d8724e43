package io.github.mongowriteguard.read;

import static org.assertj.core.api.Assertions.assertThat;

import io.github.mongowriteguard.outcome.ReadSignals;
import io.github.mongowriteguard.outcome.StaleReadDiagnosis;
import org.junit.jupiter.api.Test;

/** From signals to a plain message. */
class StaleReadDiagnosisTest {
    private static final ReadSignals NONE =
            ReadSignals.none("demo.store_inventory").withReadTarget("secondary [node:a1]");

    @Test
    void noSignal_isNone() {
        StaleReadDiagnosis diagnosis = StaleReadDiagnosis.of(NONE);
        assertThat(diagnosis.cause()).isEqualTo(StaleReadDiagnosis.Cause.NONE);
        assertThat(diagnosis.message()).contains("no StaleConfig or timeout observed");
    }

    @Test
    void staleConfigFromAShardWhosePrimaryDoesNotWrite_isASecondaryThatCannotRefresh() {
        StaleReadDiagnosis diagnosis = StaleReadDiagnosis.of(
                NONE.withStaleConfig("shard00").withStaleConfig("shard00").withPrimaryNotAcceptingWrites("shard00"));
        assertThat(diagnosis.cause()).isEqualTo(StaleReadDiagnosis.Cause.SECONDARY_CANNOT_REFRESH);
        assertThat(diagnosis.shard()).isEqualTo("shard00");
        assertThat(diagnosis.node()).isEqualTo("secondary [node:a1]");
        assertThat(diagnosis.message())
                .contains(
                        "demo.store_inventory",
                        "aimed at secondary [node:a1]",
                        "2 StaleConfig (13388) from shard00",
                        "primary of shard shard00 is not completing writes",
                        "config.cache",
                        "Do not restart secondaries of shard shard00",
                        "counts that must add up cannot");
    }

    @Test
    void staleConfigAlone_pointsAtTheShardAndAsksToCheckItsPrimary() {
        StaleReadDiagnosis diagnosis = StaleReadDiagnosis.of(NONE.withStaleConfig("shard01"));
        assertThat(diagnosis.cause()).isEqualTo(StaleReadDiagnosis.Cause.STALE_ROUTING_METADATA);
        assertThat(diagnosis.shard()).isEqualTo("shard01");
        assertThat(diagnosis.message())
                .contains("check whether the primary of shard shard01 completes writes", "Do not restart");
    }

    @Test
    void timeoutsAlone_sayMongosMayBeRetryingStaleConfigBehindThem() {
        StaleReadDiagnosis diagnosis = StaleReadDiagnosis.of(NONE.withTimeout());
        assertThat(diagnosis.cause()).isEqualTo(StaleReadDiagnosis.Cause.READ_TIMEOUTS);
        assertThat(diagnosis.shard()).isNull();
        assertThat(diagnosis.message()).contains("1 timeout(s)", "retrying StaleConfig", "Failed to refresh metadata");
    }

    @Test
    void timeoutsWithAReportedNonWritingPrimary_nameThatShard() {
        StaleReadDiagnosis diagnosis =
                StaleReadDiagnosis.of(NONE.withTimeout().withPrimaryNotAcceptingWrites("shard00"));
        assertThat(diagnosis.cause()).isEqualTo(StaleReadDiagnosis.Cause.SECONDARY_CANNOT_REFRESH);
        assertThat(diagnosis.shard()).isEqualTo("shard00");
    }
}
