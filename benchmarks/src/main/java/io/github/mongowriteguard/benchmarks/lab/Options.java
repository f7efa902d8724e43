package io.github.mongowriteguard.benchmarks.lab;

import java.nio.file.Path;
import java.util.Locale;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.ParameterException;

/**
 * The lab's options, one picocli mixin per group. A command mixes in the groups its scenarios read; the full run
 * (no command) mixes in all of them. The field initialisers are the defaults: picocli shows them in the help, and a
 * scenario run from a command without a group gets that group's defaults ({@link Config#defaults()}).
 *
 * <p>Picocli rejects unknown options, options of another command and values of the wrong type, naming the option;
 * {@link #check} adds the ranges, with a message that names the option, the bounds and an example.
 */
final class Options {
    private Options() {}

    /** Output and target, on every scenario. */
    static final class Output {
        @Option(names = "--json", description = "Print one JSON object on stdout instead of the tables.")
        boolean json;

        @Option(
                names = "--json-out",
                paramLabel = "FILE",
                description = "Also write the JSON object to FILE (stdout keeps the tables).")
        Path jsonOut;

        @Option(
                names = "--uri",
                paramLabel = "URI",
                description =
                        "Run against this real deployment instead of the emulator; what needs the emulator is skipped"
                                + " (and says so). The address is never printed.")
        String uri;

        @Option(
                names = "--progress",
                paramLabel = "MODE",
                description =
                        "auto (a progress bar when stderr is a terminal, else a few phase lines), bar, lines or none."
                                + " Default: auto.")
        Progress.Mode progress = Progress.Mode.AUTO;

        void validate(CommandSpec spec) {
            if (uri != null && !uri.startsWith("mongodb://") && !uri.startsWith("mongodb+srv://")) {
                throw new ParameterException(
                        spec.commandLine(),
                        "--uri: a connection string starts with mongodb:// or mongodb+srv://; use e.g. --uri mongodb://host:27017/");
            }
        }
    }

    /** Documents per bulk ({@code roundtrips}, {@code latency}, {@code overhead}). */
    static final class Bulk {
        @Option(
                names = "--docs",
                paramLabel = "N",
                description = "Documents per bulk, 1 to 100000. Default: ${DEFAULT-VALUE}.")
        int docs = 1000;

        void validate(CommandSpec spec) {
            check(spec, "--docs", docs, 1, 100_000, "1000");
        }
    }

    /** The sharded cluster and the bulk's keys ({@code roundtrips}, {@code latency}). */
    static final class Sharding {
        @Option(
                names = "--shards",
                paramLabel = "S",
                description = "Shards of the emulated cluster, 1 to 64. Default: ${DEFAULT-VALUE}.")
        int shards = 5;

        @Option(
                names = "--seed",
                paramLabel = "N",
                description = "Random seed of the bulk's keys. Default: ${DEFAULT-VALUE}.")
        int seed = 1;

        void validate(CommandSpec spec) {
            check(spec, "--shards", shards, 1, 64, "5");
            check(spec, "--seed", seed, 0, Integer.MAX_VALUE, "1");
        }
    }

    /** The emulated mongos' latency model and Little's law ({@code latency}). */
    static final class LatencyModel {
        @Option(
                names = "--rtt-ms",
                paramLabel = "MS",
                description = "Mongos-to-shard round trip. Default: ${DEFAULT-VALUE}.")
        double rttMs = 1.0;

        @Option(
                names = "--per-doc-ms",
                paramLabel = "MS",
                description = "Cost of one document on a shard. Default: ${DEFAULT-VALUE}.")
        double perDocMs = 0.2;

        @Option(
                names = "--slow-shard-factor",
                paramLabel = "X",
                description = "How much slower the slow shard is, 1 to 1000. Default: ${DEFAULT-VALUE}.")
        double slowShardFactor = 10.0;

        @Option(
                names = "--arrival-per-s",
                paramLabel = "RATE",
                description = "Bulks arriving per second (Little's law). Default: ${DEFAULT-VALUE}.")
        double arrivalPerSecond = 20.0;

        @Option(
                names = "--repetitions",
                paramLabel = "N",
                description =
                        "Measured runs per case, interleaved (median reported), 1 to 1000. Default: ${DEFAULT-VALUE}.")
        int repetitions = 5;

        void validate(CommandSpec spec) {
            check(spec, "--rtt-ms", rttMs, 0, 1000, "1");
            check(spec, "--per-doc-ms", perDocMs, 0, 1000, "0.2");
            check(spec, "--slow-shard-factor", slowShardFactor, 1, 1000, "10");
            check(spec, "--arrival-per-s", arrivalPerSecond, 0.001, 1_000_000, "20");
            check(spec, "--repetitions", repetitions, 1, 1000, "5");
        }
    }

    /** Measured runs of {@code overhead}. */
    static final class OverheadRuns {
        @Option(
                names = "--runs",
                paramLabel = "N",
                description =
                        "Measured runs per client, interleaved (median reported), 1 to 10000. Default: ${DEFAULT-VALUE}.")
        int runs = 15;

        void validate(CommandSpec spec) {
            check(spec, "--runs", runs, 1, 10_000, "15");
        }
    }

    /** The kind of stall that holds the inserts in {@code retries}. */
    enum StallKind {
        INTERRUPTIBLE,
        UNINTERRUPTIBLE,
        BOTH;

        String label() {
            return name().toLowerCase(Locale.ROOT);
        }
    }

    /** Part 2's application retries ({@code retries}). */
    static final class RetryScenario {
        @Option(
                names = "--app-attempts",
                paramLabel = "N",
                description = "Application executions of the insert, 1 to 20. Default: ${DEFAULT-VALUE}.")
        int appAttempts = 4;

        @Option(
                names = "--socket-timeout-ms",
                paramLabel = "MS",
                description = "Client socket read timeout, 50 to 60000. Default: ${DEFAULT-VALUE}.")
        int socketTimeoutMs = 300;

        @Option(
                names = "--stall",
                paramLabel = "KIND",
                description = "interruptible (maxTimeMS stops it), uninterruptible (runs to its end) or both."
                        + " Default: uninterruptible; both in the full run.")
        StallKind stall;

        /** The stall asked for, or {@code fallback} when none was. */
        StallKind stallOr(StallKind fallback) {
            return stall == null ? fallback : stall;
        }

        void validate(CommandSpec spec) {
            check(spec, "--app-attempts", appAttempts, 1, 20, "4");
            check(spec, "--socket-timeout-ms", socketTimeoutMs, 50, 60_000, "300");
        }
    }

    /** Part 6's time scale ({@code stale-reads}). */
    static final class StaleRead {
        @Option(
                names = "--refresh-limit-ms",
                paramLabel = "MS",
                description =
                        "A secondary's routing refresh limit (30 s on a server, scaled), 1 to 600000. Default: ${DEFAULT-VALUE}.")
        long refreshLimitMs = 1_500;

        @Option(
                names = "--max-time-ms",
                paramLabel = "MS",
                description =
                        "The client's maxTimeMS on each read (60 s in the article, scaled), 1 to 600000. Default: ${DEFAULT-VALUE}.")
        long maxTimeMs = 3_000;

        void validate(CommandSpec spec) {
            check(spec, "--refresh-limit-ms", refreshLimitMs, 1, 600_000, "1500");
            check(spec, "--max-time-ms", maxTimeMs, 1, 600_000, "3000");
        }
    }

    /** Every group a scenario can read; a command that lacks a group passes its defaults. */
    record Config(
            Output output,
            Bulk bulk,
            Sharding sharding,
            LatencyModel latency,
            OverheadRuns overhead,
            RetryScenario retries,
            StaleRead staleReads) {

        static Config defaults() {
            return new Config(
                    new Output(),
                    new Bulk(),
                    new Sharding(),
                    new LatencyModel(),
                    new OverheadRuns(),
                    new RetryScenario(),
                    new StaleRead());
        }

        String uri() {
            return output.uri;
        }

        Config with(Output o) {
            return new Config(o, bulk, sharding, latency, overhead, retries, staleReads);
        }

        Config with(Bulk b) {
            return new Config(output, b, sharding, latency, overhead, retries, staleReads);
        }

        Config with(Sharding s) {
            return new Config(output, bulk, s, latency, overhead, retries, staleReads);
        }

        Config with(LatencyModel l) {
            return new Config(output, bulk, sharding, l, overhead, retries, staleReads);
        }

        Config with(OverheadRuns r) {
            return new Config(output, bulk, sharding, latency, r, retries, staleReads);
        }

        Config with(RetryScenario r) {
            return new Config(output, bulk, sharding, latency, overhead, r, staleReads);
        }

        Config with(StaleRead s) {
            return new Config(output, bulk, sharding, latency, overhead, retries, s);
        }

        /** Checks every group's ranges; the first value out of range is a usage error naming its option. */
        void validate(CommandSpec spec) {
            output.validate(spec);
            bulk.validate(spec);
            sharding.validate(spec);
            latency.validate(spec);
            overhead.validate(spec);
            retries.validate(spec);
            staleReads.validate(spec);
        }
    }

    /** A usage error unless {@code min <= value <= max}; NaN and infinities are out of every range. */
    static void check(CommandSpec spec, String option, double value, double min, double max, String example) {
        if (!(value >= min && value <= max)) {
            throw new ParameterException(
                    spec.commandLine(),
                    option + " (" + format(value) + ") must be between " + format(min) + " and " + format(max)
                            + "; use e.g. " + option + " " + example);
        }
    }

    static String format(double d) {
        return d == Math.rint(d) && Math.abs(d) < 1e15 ? String.valueOf((long) d) : String.valueOf(d);
    }
}
