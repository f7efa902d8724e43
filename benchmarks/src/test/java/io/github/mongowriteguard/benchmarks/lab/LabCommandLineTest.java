package io.github.mongowriteguard.benchmarks.lab;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.util.List;
import org.junit.jupiter.api.Test;
import picocli.CommandLine;
import picocli.CommandLine.ParseResult;

/** The lab's picocli command line: defaults, subcommands, and usage errors that name the option (no scenario runs). */
class LabCommandLineTest {

    /** What one {@code execute} printed and returned. */
    record Run(int exitCode, String out, String err) {}

    static Run execute(String... args) {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        ByteArrayOutputStream err = new ByteArrayOutputStream();
        int code = Lab.commandLine(
                        new PrintStream(out, true, StandardCharsets.UTF_8),
                        new PrintStream(err, true, StandardCharsets.UTF_8))
                .execute(args);
        return new Run(code, out.toString(StandardCharsets.UTF_8), err.toString(StandardCharsets.UTF_8));
    }

    static ParseResult parse(String... args) {
        return Lab.commandLine(System.out, System.err).parseArgs(args);
    }

    @Test
    void noCommand_isTheFullRunWithTheArticlesParameters() {
        CommandLine cli = Lab.commandLine(System.out, System.err);
        ParseResult result = cli.parseArgs();
        assertThat(result.subcommand()).isNull();
        Lab lab = cli.getCommand();
        assertThat(lab.sharding.shards).isEqualTo(5);
        assertThat(lab.bulk.docs).isEqualTo(1000);
        assertThat(lab.sharding.seed).isEqualTo(1);
        assertThat(lab.latency.rttMs).isEqualTo(1.0);
        assertThat(lab.latency.perDocMs).isEqualTo(0.2);
        assertThat(lab.latency.slowShardFactor).isEqualTo(10.0);
        assertThat(lab.latency.arrivalPerSecond).isEqualTo(20.0);
        assertThat(lab.latency.repetitions).isEqualTo(5);
        assertThat(lab.overhead.runs).isEqualTo(15);
        assertThat(lab.retries.appAttempts).isEqualTo(4);
        assertThat(lab.retries.socketTimeoutMs).isEqualTo(300);
        assertThat(lab.retries.stallOr(Options.StallKind.BOTH)).isEqualTo(Options.StallKind.BOTH);
        assertThat(lab.staleReads.refreshLimitMs).isEqualTo(1500);
        assertThat(lab.staleReads.maxTimeMs).isEqualTo(3000);
        assertThat(lab.output.json).isFalse();
        assertThat(lab.output.uri).isNull();
        assertThat(lab.report.toString()).isEqualTo("lab-report.html");
    }

    @Test
    void fullRun_runsEveryScenarioTheReadmeNames() {
        assertThat(List.of(Lab.Scenario.values()))
                .extracting(s -> s.command)
                .containsExactly(
                        "roundtrips", "latency", "retries", "overhead", "stale-reads", "hot-keys", "scale", "connect");
        CommandLine cli = Lab.commandLine(System.out, System.err);
        for (Lab.Scenario scenario : Lab.Scenario.values()) {
            assertThat(cli.getSubcommands()).containsKey(scenario.command);
        }
    }

    @Test
    void fullRun_takesEveryScenariosOptions() {
        CommandLine cli = Lab.commandLine(System.out, System.err);
        cli.parseArgs(
                "--shards", "4", "--stall", "interruptible", "--refresh-limit-ms", "800", "--runs", "3", "--json");
        Lab lab = cli.getCommand();
        assertThat(lab.sharding.shards).isEqualTo(4);
        assertThat(lab.retries.stallOr(Options.StallKind.BOTH)).isEqualTo(Options.StallKind.INTERRUPTIBLE);
        assertThat(lab.staleReads.refreshLimitMs).isEqualTo(800);
        assertThat(lab.overhead.runs).isEqualTo(3);
        assertThat(lab.output.json).isTrue();
    }

    @Test
    void commandOptions_areParsedWithSpaceOrEquals() {
        ParseResult result = parse("latency", "--shards", "4", "--per-doc-ms=0.5", "--json");
        assertThat(result.subcommand().commandSpec().name()).isEqualTo("latency");
        Lab.LatencyCommand latency =
                (Lab.LatencyCommand) result.subcommand().commandSpec().userObject();
        assertThat(latency.sharding.shards).isEqualTo(4);
        assertThat(latency.latency.perDocMs).isEqualTo(0.5);
        assertThat(latency.bulk.docs).isEqualTo(1000);
        assertThat(latency.output.json).isTrue();
    }

    @Test
    void unknownCommand_isAUsageErrorWithASuggestion() {
        Run run = execute("roundtrip");
        assertThat(run.exitCode()).isEqualTo(2);
        assertThat(run.err())
                .contains("lab: Unmatched argument at index 0: 'roundtrip'")
                .contains("roundtrips");
        assertThat(run.out()).isEmpty();
    }

    @Test
    void unknownOption_namesItAndSuggestsTheCommandsOption() {
        Run run = execute("roundtrips", "--shard", "3");
        assertThat(run.exitCode()).isEqualTo(2);
        assertThat(run.err()).contains("Unknown options: '--shard'").contains("--shards");
    }

    @Test
    void optionOfAnotherCommand_isRejected() {
        Run run = execute("roundtrips", "--stall", "interruptible");
        assertThat(run.exitCode()).isEqualTo(2);
        assertThat(run.err()).contains("Unknown options: '--stall'");
    }

    @Test
    void nonNumericValue_namesTheOption() {
        assertThat(execute("roundtrips", "--docs", "many").err())
                .contains("Invalid value for option '--docs': 'many' is not an int");
        assertThat(execute("latency", "--rtt-ms", "fast").err()).contains("Invalid value for option '--rtt-ms'");
    }

    @Test
    void valueOutOfRange_namesTheOptionTheBoundsAndAnExample() {
        Run run = execute("roundtrips", "--shards", "0");
        assertThat(run.exitCode()).isEqualTo(2);
        assertThat(run.err())
                .contains("lab: --shards (0) must be between 1 and 64; use e.g. --shards 5")
                .contains("see: java -jar lab.jar roundtrips --help");
        assertThat(execute("latency", "--slow-shard-factor", "0.5").err())
                .contains("--slow-shard-factor (0.5) must be between 1 and 1000");
        assertThat(execute("latency", "--rtt-ms", "NaN").err()).contains("--rtt-ms (NaN) must be between 0 and 1000");
        assertThat(execute("--docs", "0").err())
                .contains("--docs (0) must be between 1 and 100000")
                .contains("see: java -jar lab.jar --help");
        assertThat(execute("stale-reads", "--max-time-ms", "-5").err())
                .contains("--max-time-ms (-5) must be between 1 and 600000");
    }

    @Test
    void missingValue_isRejected() {
        assertThat(execute("roundtrips", "--docs").err()).contains("Missing required parameter for option '--docs'");
        assertThat(execute("roundtrips", "--docs", "--json").err()).contains("'--docs'");
    }

    @Test
    void uri_mustBeAConnectionString() {
        assertThat(execute("overhead", "--uri", "localhost:27017").err())
                .contains("--uri: a connection string starts with mongodb:// or mongodb+srv://");
    }

    @Test
    void stall_acceptsOnlyKnownKindsInAnyCase() {
        Lab.RetriesCommand retries = (Lab.RetriesCommand) parse("retries", "--stall", "interruptible")
                .subcommand()
                .commandSpec()
                .userObject();
        assertThat(retries.retries.stallOr(Options.StallKind.UNINTERRUPTIBLE))
                .isEqualTo(Options.StallKind.INTERRUPTIBLE);
        assertThat(execute("retries", "--stall", "forever").err())
                .contains("Invalid value for option '--stall'")
                .contains("INTERRUPTIBLE, UNINTERRUPTIBLE, BOTH");
    }

    @Test
    void flag_takesNoValue() {
        Run run = execute("overhead", "--json=yes");
        assertThat(run.exitCode()).isEqualTo(2);
        assertThat(run.err()).contains("--json");
    }

    @Test
    void strayArgument_isRejected() {
        assertThat(execute("roundtrips", "5").err()).contains("Unmatched argument at index 1: '5'");
    }

    @Test
    void jmh_passesEverythingAfterItToJmh() {
        ParseResult result = parse("jmh", "PlanBenchmark", "-f", "1", "-prof", "gc");
        Lab.JmhCommand jmh = (Lab.JmhCommand) result.subcommand().commandSpec().userObject();
        assertThat(jmh.args).containsExactly("PlanBenchmark", "-f", "1", "-prof", "gc");
        Lab.JmhCommand help =
                (Lab.JmhCommand) parse("jmh", "-h").subcommand().commandSpec().userObject();
        assertThat(help.args).containsExactly("-h");
    }

    @Test
    void help_listsEveryCommandAndOption() {
        Run run = execute("help");
        assertThat(run.exitCode()).isZero();
        for (String command :
                List.of("roundtrips", "latency", "retries", "overhead", "stale-reads", "serve", "jmh", "help")) {
            assertThat(run.out()).contains(command);
        }
        for (String option : List.of(
                "--json",
                "--json-out",
                "--uri",
                "--progress",
                "--docs",
                "--shards",
                "--seed",
                "--rtt-ms",
                "--per-doc-ms",
                "--slow-shard-factor",
                "--arrival-per-s",
                "--repetitions",
                "--runs",
                "--app-attempts",
                "--socket-timeout-ms",
                "--stall",
                "--refresh-limit-ms",
                "--max-time-ms",
                "--report")) {
            assertThat(run.out()).contains(option);
        }
        assertThat(run.out()).contains("Default: 1000").contains("Default: 5");
    }

    @Test
    void help_summarisesEveryCommandInAWholeSentence() {
        // the command list shows only the first line of each description: it must not stop mid-sentence
        Lab.commandLine(System.out, System.err).getSubcommands().forEach((name, command) -> {
            String[] description = command.getCommandSpec().usageMessage().description();
            assertThat(description).as(name).isNotEmpty();
            assertThat(description[0].strip()).as(name).endsWith(".");
        });
    }

    @Test
    void commandHelp_showsOnlyThatCommandsOptions() {
        Run run = execute("retries", "--help");
        assertThat(run.exitCode()).isZero();
        assertThat(run.out()).contains("--app-attempts", "--stall", "--json").doesNotContain("--shards", "--report");
        assertThat(execute("help", "stale-reads").out()).contains("--refresh-limit-ms", "--max-time-ms");
    }

    @Test
    void uriIsHiddenInTheReportsCommandLine() {
        assertThat(Lab.hideUri("latency --uri mongodb://u:p@h/ --json")).isEqualTo("latency --uri <hidden> --json");
        assertThat(Lab.hideUri("--uri=mongodb://u:p@h/")).isEqualTo("--uri <hidden>");
    }
}
