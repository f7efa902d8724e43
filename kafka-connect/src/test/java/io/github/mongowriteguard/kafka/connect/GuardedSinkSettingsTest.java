package io.github.mongowriteguard.kafka.connect;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.time.Duration;
import java.util.Map;
import org.apache.kafka.common.config.Config;
import org.apache.kafka.common.config.ConfigException;
import org.apache.kafka.common.config.ConfigValue;
import org.junit.jupiter.api.Test;

class GuardedSinkSettingsTest {

    @Test
    void defaults_areTheGuardsDefaults() {
        GuardedSinkSettings settings = GuardedSinkSettings.from(Map.of("topics", "t"));
        assertThat(settings.getGuardSettings().getServerDeadline()).isEmpty();
        assertThat(settings.getGuardSettings().isStrictOrdered()).isFalse();
        assertThat(settings.getSettleMaxWait()).isEqualTo(Duration.ofSeconds(30));
        assertThat(settings.getParallelPartitions()).isEqualTo(GuardedSinkSettings.DEFAULT_PARALLEL_PARTITIONS);
    }

    @Test
    void settingsUnderThePrefix_reachTheGuard() {
        GuardedSinkSettings settings = GuardedSinkSettings.from(Map.of(
                "mongo.write-guard.server-deadline.ms", "1500",
                "mongo.write-guard.strict-ordered", "true",
                "mongo.write-guard.retry.max-attempts", "5",
                "mongo.write-guard.parallel-partitions", "3"));
        assertThat(settings.getParallelPartitions()).isEqualTo(3);
        assertThat(settings.getGuardSettings().getServerDeadline()).contains(Duration.ofMillis(1500));
        assertThat(settings.getGuardSettings().isStrictOrdered()).isTrue();
        assertThat(settings.getGuardSettings().getRetryPolicy().getMaxAttempts())
                .isEqualTo(5);
    }

    @Test
    void anUnknownSettingUnderThePrefix_isRefusedWithTheKnownOnes() {
        assertThatThrownBy(() -> GuardedSinkSettings.from(Map.of("mongo.write-guard.last-write-wins", "true")))
                .isInstanceOf(ConfigException.class)
                .hasMessageContaining("mongo.write-guard.last-write-wins")
                .hasMessageContaining("mongo.write-guard.strict-ordered");
    }

    @Test
    void aBadValue_namesTheSettingAndTheFix() {
        assertThatThrownBy(() -> GuardedSinkSettings.from(Map.of("mongo.write-guard.server-deadline-fraction", "1.5")))
                .isInstanceOf(ConfigException.class)
                .hasMessageContaining("serverDeadlineFraction");
        assertThatThrownBy(() -> GuardedSinkSettings.from(Map.of("mongo.write-guard.server-deadline.ms", "0")))
                .isInstanceOf(ConfigException.class)
                .hasMessageContaining("mongo.write-guard.server-deadline.ms")
                .hasMessageContaining("remove it");
        assertThatThrownBy(() -> GuardedSinkSettings.from(Map.of("mongo.write-guard.parallel-shard-commands", "0")))
                .isInstanceOf(ConfigException.class)
                .hasMessageContaining("mongo.write-guard.parallel-shard-commands");
        for (String outside : new String[] {"0", "65"}) {
            assertThatThrownBy(() -> GuardedSinkSettings.from(Map.of("mongo.write-guard.parallel-partitions", outside)))
                    .isInstanceOf(ConfigException.class)
                    .hasMessageContaining("mongo.write-guard.parallel-partitions");
        }
    }

    @Test
    void theConnector_validatesBothTheOfficialAndTheGuardSettings() {
        GuardedMongoSinkConnector connector = new GuardedMongoSinkConnector();
        assertThat(connector.config().names())
                .contains(
                        "connection.uri",
                        "bulk.write.ordered",
                        "writemodel.strategy",
                        GuardedSinkSettings.STRICT_ORDERED);
        Config config = connector.validate(Map.of(
                "connector.class", GuardedMongoSinkConnector.class.getName(),
                "topics", "t",
                "connection.uri", "mongodb://localhost:1/?serverSelectionTimeoutMS=200&connectTimeoutMS=200",
                "mongo.write-guard.retry.max-attempts", "0"));
        ConfigValue attempts = config.configValues().stream()
                .filter(v -> v.name().equals(GuardedSinkSettings.RETRY_MAX_ATTEMPTS))
                .findFirst()
                .orElseThrow();
        assertThat(attempts.errorMessages()).isNotEmpty();
        assertThatThrownBy(() -> connector.start(Map.of("topics", "t", "mongo.write-guard.nope", "1")))
                .isInstanceOf(ConfigException.class)
                .hasMessageContaining("mongo.write-guard.nope");
    }

    @Test
    void validate_putsTheUnknownSettingError_onTheUnknownKey_notOnADefinedSettingThatIsFine() {
        Config config = new GuardedMongoSinkConnector()
                .validate(Map.of(
                        "connector.class", GuardedMongoSinkConnector.class.getName(),
                        "topics", "t",
                        "connection.uri", "mongodb://localhost:1/?serverSelectionTimeoutMS=200&connectTimeoutMS=200",
                        "mongo.write-guard.settle.max-wait", "30000"));
        assertThat(config.configValues())
                .filteredOn(v -> v.name().startsWith(GuardedSinkSettings.PREFIX)
                        && !v.errorMessages().isEmpty())
                .singleElement()
                .satisfies(v -> {
                    assertThat(v.name()).isEqualTo("mongo.write-guard.settle.max-wait");
                    assertThat(v.value()).isEqualTo("30000");
                    assertThat(v.errorMessages().get(0))
                            .contains("Unknown guarded-sink setting(s) [mongo.write-guard.settle.max-wait]")
                            .contains(GuardedSinkSettings.SETTLE_MAX_WAIT_MS);
                });
    }
}
