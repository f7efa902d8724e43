package io.github.mongowriteguard.benchmarks.lab;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import org.junit.jupiter.api.Test;

class LabOptionsTest {

    @Test
    void noCommand_runsEverythingWithTheArticlesParameters() {
        LabOptions options = LabOptions.parse();
        assertThat(options.command()).isEqualTo("all");
        assertThat(options.intValue("shards")).isEqualTo(5);
        assertThat(options.intValue("docs")).isEqualTo(1000);
        assertThat(options.decimal("rtt-ms")).isEqualTo(1.0);
        assertThat(options.decimal("per-doc-ms")).isEqualTo(0.2);
        assertThat(options.decimal("slow-shard-factor")).isEqualTo(10.0);
        assertThat(options.decimal("arrival-per-s")).isEqualTo(20.0);
        assertThat(options.intValue("app-attempts")).isEqualTo(4);
        assertThat(options.intValue("socket-timeout-ms")).isEqualTo(300);
        assertThat(options.flag("json")).isFalse();
        assertThat(options.text("uri")).isNull();
    }

    @Test
    void commandOptions_areParsedWithSpaceOrEquals() {
        LabOptions options = LabOptions.parse("latency", "--shards", "4", "--per-doc-ms=0.5", "--json");
        assertThat(options.command()).isEqualTo("latency");
        assertThat(options.intValue("shards")).isEqualTo(4);
        assertThat(options.decimal("per-doc-ms")).isEqualTo(0.5);
        assertThat(options.flag("json")).isTrue();
        assertThat(options.given("shards")).isTrue();
        assertThat(options.given("docs")).isFalse();
    }

    @Test
    void unknownCommand_isRejectedWithTheListOfCommands() {
        assertThatThrownBy(() -> LabOptions.parse("roundtrip"))
            .isInstanceOf(IllegalArgumentException.class)
            .hasMessageContaining("unknown command 'roundtrip'").hasMessageContaining("roundtrips");
    }

    @Test
    void unknownOption_isRejectedWithTheCommandsOptions() {
        assertThatThrownBy(() -> LabOptions.parse("roundtrips", "--shard", "3"))
            .hasMessageContaining("unknown option --shard").hasMessageContaining("--shards");
    }

    @Test
    void optionOfAnotherCommand_isRejected() {
        assertThatThrownBy(() -> LabOptions.parse("roundtrips", "--stall", "interruptible"))
            .hasMessageContaining("--stall does not apply to 'roundtrips'").hasMessageContaining("retries");
    }

    @Test
    void nonNumericValue_namesTheOptionAndAnExample() {
        assertThatThrownBy(() -> LabOptions.parse("roundtrips", "--docs", "many"))
            .hasMessage("--docs: 'many' is not a whole number; use e.g. --docs 1000");
        assertThatThrownBy(() -> LabOptions.parse("latency", "--rtt-ms", "fast"))
            .hasMessageContaining("--rtt-ms: 'fast' is not a number");
    }

    @Test
    void valueOutOfRange_namesTheBounds() {
        assertThatThrownBy(() -> LabOptions.parse("roundtrips", "--shards", "0"))
            .hasMessage("--shards (0) must be between 1 and 64; use e.g. --shards 5");
        assertThatThrownBy(() -> LabOptions.parse("latency", "--slow-shard-factor", "0.5"))
            .hasMessageContaining("must be between 1 and 1000");
    }

    @Test
    void missingValue_isRejected() {
        assertThatThrownBy(() -> LabOptions.parse("roundtrips", "--docs"))
            .hasMessageContaining("--docs needs a value");
        assertThatThrownBy(() -> LabOptions.parse("roundtrips", "--docs", "--json"))
            .hasMessageContaining("--docs needs a value");
    }

    @Test
    void stall_acceptsOnlyKnownKinds() {
        assertThat(LabOptions.parse("retries", "--stall", "interruptible").text("stall")).isEqualTo("interruptible");
        assertThatThrownBy(() -> LabOptions.parse("retries", "--stall", "forever"))
            .hasMessageContaining("use interruptible, uninterruptible or both");
    }

    @Test
    void flag_takesNoValue() {
        assertThatThrownBy(() -> LabOptions.parse("overhead", "--json=yes")).hasMessageContaining("--json takes no value");
    }

    @Test
    void strayArgument_isRejected() {
        assertThatThrownBy(() -> LabOptions.parse("roundtrips", "5")).hasMessageContaining("unexpected argument '5'");
    }

    @Test
    void jmh_passesEverythingAfterItToJmh() {
        LabOptions options = LabOptions.parse("jmh", "PlanBenchmark", "-f", "1");
        assertThat(options.rest()).containsExactly("PlanBenchmark", "-f", "1");
    }

    @Test
    void usage_listsEveryCommandAndOption() {
        String usage = LabOptions.usage();
        LabOptions.SCENARIOS.forEach(c -> assertThat(usage).contains(c));
        LabOptions.SPECS.keySet().forEach(name -> assertThat(usage).contains("--" + name));
    }
}
