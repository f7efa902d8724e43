package io.github.mongowriteguard.benchmarks.lab;

import io.github.mongowriteguard.testkit.EmulatedCluster;
import io.github.mongowriteguard.testkit.EmulatedReplicaSet;
import java.io.OutputStream;
import java.io.PrintStream;
import java.io.PrintWriter;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.EnumSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.Callable;
import java.util.concurrent.CountDownLatch;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.HelpCommand;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;
import picocli.CommandLine.ParentCommand;
import picocli.CommandLine.Spec;
import picocli.CommandLine.UnmatchedArgumentException;

/**
 * The lab: runs the articles' scenarios on the embedded emulated cluster (or, with {@code --uri}, on a real
 * deployment, skipping what needs the emulator) and prints what the server saw. Progress goes to stderr (a progress
 * bar on a terminal, a few phase lines elsewhere); stdout carries the tables, or with {@code --json} exactly one JSON
 * object. The command line is picocli's: {@code java -jar lab.jar help [COMMAND]} or {@code --help} on any command.
 *
 * <pre>
 * java -jar benchmarks/target/lab.jar                        # every scenario, tables, lab-report.html
 * java -jar benchmarks/target/lab.jar roundtrips --shards 4  # part 1: round trips per client vs 1+(n-1)(1-1/S)
 * java -jar benchmarks/target/lab.jar latency --json         # part 1: Little's-law table, measured
 * java -jar benchmarks/target/lab.jar retries --stall both   # part 2: sends, copies, documents per retry
 * java -jar benchmarks/target/lab.jar overhead               # guard vs raw driver on one replica set
 * java -jar benchmarks/target/lab.jar stale-reads            # part 6: reads on a shard whose primary cannot write
 * java -jar benchmarks/target/lab.jar jmh -f 1 -wi 1 -i 3    # the JMH benchmarks
 * java -jar benchmarks/target/lab.jar perf                   # the performance targets in one table (short JMH runs)
 * java -jar benchmarks/target/lab.jar soak --minutes 30       # heap, threads, sessions, held structures under faults
 * java -jar benchmarks/target/lab.jar soak --cost-free        # heap and ledger over millions of guarded writes
 * java -jar benchmarks/target/lab.jar payloads               # 1,000 x 1 MiB and 100,000 x 1 KiB, guard vs driver
 * java -jar benchmarks/target/lab.jar settle                 # a consumer under faults: raw retries vs settle first
 * java -jar benchmarks/target/lab.jar reactive               # reactive guard vs reactive driver: time, round trips, 64 subscribers
 * java -jar benchmarks/target/lab.jar connect                # Kafka Connect: official sink (ordered, unordered) vs guarded
 * java -jar benchmarks/target/lab.jar serve                  # an emulated replica set until stopped
 * </pre>
 */
@Command(
        name = "java -jar lab.jar",
        sortOptions = false,
        usageHelpAutoWidth = true,
        abbreviateSynopsis = true,
        synopsisSubcommandLabel = "[COMMAND]",
        description = {
            "Runs the articles' scenarios on the embedded emulated cluster and prints what the server saw.",
            "Without a command: every scenario (roundtrips, latency, retries, overhead, stale-reads, hot-keys, scale, connect) at the"
                    + " articles'"
                    + " parameters, the tables, and the HTML report (--report). Every option of every scenario applies."
        },
        subcommands = {
            Lab.RoundTripsCommand.class,
            Lab.LatencyCommand.class,
            Lab.RetriesCommand.class,
            Lab.OverheadCommand.class,
            Lab.StaleReadsCommand.class,
            Lab.HotKeysCommand.class,
            Lab.ScaleCommand.class,
            Lab.FaultsCommand.class,
            Lab.ServeCommand.class,
            Lab.JmhCommand.class,
            Lab.PerfCommand.class,
            Lab.SoakCommand.class,
            Lab.PayloadsCommand.class,
            Lab.SettleCommand.class,
            Lab.ReactiveCommand.class,
            Lab.ConnectCommand.class,
            HelpCommand.class
        },
        exitCodeListHeading = "%nExit codes:%n",
        exitCodeList = {"0:done", "1:a scenario failed (the stack trace says why)", "2:invalid command line"})
public final class Lab implements Callable<Integer> {

    /** The scenarios in the order the full run runs and prints them; {@code key} names each in the full run's JSON. */
    enum Scenario {
        ROUNDTRIPS("roundtrips", "roundtrips"),
        LATENCY("latency", "latency"),
        RETRIES("retries", "retries"),
        OVERHEAD("overhead", "overhead"),
        STALE_READS("stale-reads", "staleReads"),
        HOT_KEYS("hot-keys", "hotKeys"),
        SCALE("scale", "scale"),
        CONNECT("connect", "connect");

        final String command;
        final String key;

        Scenario(String command, String key) {
            this.command = command;
            this.key = key;
        }
    }

    /** What the scenarios of one run found; a scenario that did not run is null. */
    record Results(
            RoundTrips.Result roundTrips,
            Latency.Result latency,
            Retries.Result retries,
            Overhead.Result overhead,
            StaleReads.Result staleReads,
            HotKeys.Result hotKeys,
            Scale.Result scale,
            ConnectSinks.Result connect) {
        /** Without the scale and connect scenarios. */
        Results(
                RoundTrips.Result roundTrips,
                Latency.Result latency,
                Retries.Result retries,
                Overhead.Result overhead,
                StaleReads.Result staleReads,
                HotKeys.Result hotKeys) {
            this(roundTrips, latency, retries, overhead, staleReads, hotKeys, null, null);
        }

        /** Without the hot-keys and scale scenarios. */
        Results(
                RoundTrips.Result roundTrips,
                Latency.Result latency,
                Retries.Result retries,
                Overhead.Result overhead,
                StaleReads.Result staleReads) {
            this(roundTrips, latency, retries, overhead, staleReads, null, null, null);
        }
    }

    /** {@code -h}/{@code --help} on every command. */
    static final class HelpOption {
        @Option(
                names = {"-h", "--help"},
                usageHelp = true,
                description = "Show this help and exit.")
        boolean help;
    }

    private final PrintStream out;
    private final PrintStream err;
    /** The scale scenario's shapes: the defaults in the full run, the {@code scale} command's options otherwise. */
    Scale.Settings scale = Scale.Settings.DEFAULT;
    /** The connect scenario's sizes: the defaults in the full run, the {@code connect} command's options otherwise. */
    ConnectSinks.Settings connect = ConnectSinks.Settings.DEFAULT;

    @Spec
    CommandSpec spec;

    @Mixin
    Options.Output output;

    @Mixin
    Options.Bulk bulk;

    @Mixin
    Options.Sharding sharding;

    @Mixin
    Options.LatencyModel latency;

    @Mixin
    Options.OverheadRuns overhead;

    @Mixin
    Options.RetryScenario retries;

    @Mixin
    Options.StaleRead staleReads;

    @Option(
            names = "--report",
            paramLabel = "FILE",
            description = "Where the full run writes its HTML report. Default: ${DEFAULT-VALUE}.")
    Path report = Path.of("lab-report.html");

    @Mixin
    HelpOption help;

    Lab(PrintStream out, PrintStream err) {
        this.out = out;
        this.err = err;
    }

    public static void main(String[] args) {
        System.exit(commandLine(System.out, System.err).execute(args));
    }

    /**
     * The lab's command line writing to {@code out} and {@code err}: usage errors print the message (naming the
     * option), picocli's suggestions for a mistyped name and where to find help, and exit with 2.
     */
    static CommandLine commandLine(PrintStream out, PrintStream err) {
        CommandLine cli = new CommandLine(new Lab(out, err));
        cli.setCaseInsensitiveEnumValuesAllowed(true);
        cli.setExpandAtFiles(false);
        cli.setOut(new PrintWriter(out, true, StandardCharsets.UTF_8));
        cli.setErr(new PrintWriter(err, true, StandardCharsets.UTF_8));
        // Everything after "jmh" goes to JMH as it is, its own options (-f, -wi, -h ...) included.
        cli.getSubcommands()
                .get("jmh")
                .setUnmatchedOptionsArePositionalParams(true)
                .setStopAtPositional(true);
        cli.setParameterExceptionHandler((e, args) -> {
            CommandLine failed = e.getCommandLine();
            PrintWriter w = failed.getErr();
            w.println("lab: " + e.getMessage());
            if (!UnmatchedArgumentException.printSuggestions(e, w)) {
                String command = failed == cli ? "" : failed.getCommandName() + " ";
                w.println("see: java -jar lab.jar " + command + "--help");
            }
            w.flush();
            return failed.getCommandSpec().exitCodeOnInvalidInput();
        });
        return cli;
    }

    /** The full run: every scenario with every option; both stalls unless {@code --stall} says one. */
    @Override
    public Integer call() throws Exception {
        Options.Config config = new Options.Config(output, bulk, sharding, latency, overhead, retries, staleReads);
        return run(spec, EnumSet.allOf(Scenario.class), config, Options.StallKind.BOTH, report);
    }

    @Command(
            name = "roundtrips",
            sortOptions = false,
            description =
                    "Part 1: mongos-to-shard round trips of one hashed-key bulk per client, next to 1+(n-1)(1-1/S),"
                            + " and for S = 2..8.")
    static final class RoundTripsCommand implements Callable<Integer> {
        @ParentCommand
        Lab lab;

        @Spec
        CommandSpec spec;

        @Mixin
        Options.Output output;

        @Mixin
        Options.Bulk bulk;

        @Mixin
        Options.Sharding sharding;

        @Mixin
        HelpOption help;

        @Override
        public Integer call() throws Exception {
            return lab.run(
                    spec,
                    EnumSet.of(Scenario.ROUNDTRIPS),
                    Options.Config.defaults().with(output).with(bulk).with(sharding),
                    Options.StallKind.UNINTERRUPTIBLE,
                    null);
        }
    }

    @Command(
            name = "latency",
            sortOptions = false,
            description =
                    "Part 1: wall time per bulk, every shard normal and one shard slow; Little's-law bulks in flight.")
    static final class LatencyCommand implements Callable<Integer> {
        @ParentCommand
        Lab lab;

        @Spec
        CommandSpec spec;

        @Mixin
        Options.Output output;

        @Mixin
        Options.Bulk bulk;

        @Mixin
        Options.Sharding sharding;

        @Mixin
        Options.LatencyModel latency;

        @Mixin
        HelpOption help;

        @Override
        public Integer call() throws Exception {
            return lab.run(
                    spec,
                    EnumSet.of(Scenario.LATENCY),
                    Options.Config.defaults()
                            .with(output)
                            .with(bulk)
                            .with(sharding)
                            .with(latency),
                    Options.StallKind.UNINTERRUPTIBLE,
                    null);
        }
    }

    @Command(
            name = "retries",
            sortOptions = false,
            description = "Part 2: sends, server copies and documents per application retry, raw driver vs guarded.")
    static final class RetriesCommand implements Callable<Integer> {
        @ParentCommand
        Lab lab;

        @Spec
        CommandSpec spec;

        @Mixin
        Options.Output output;

        @Mixin
        Options.RetryScenario retries;

        @Mixin
        HelpOption help;

        @Override
        public Integer call() throws Exception {
            return lab.run(
                    spec,
                    EnumSet.of(Scenario.RETRIES),
                    Options.Config.defaults().with(output).with(retries),
                    Options.StallKind.UNINTERRUPTIBLE,
                    null);
        }
    }

    @Command(
            name = "overhead",
            sortOptions = false,
            description = "Guarded vs raw driver on one replica set, interleaved runs, the ratio of the medians.")
    static final class OverheadCommand implements Callable<Integer> {
        @ParentCommand
        Lab lab;

        @Spec
        CommandSpec spec;

        @Mixin
        Options.Output output;

        @Mixin
        Options.Bulk bulk;

        @Mixin
        Options.OverheadRuns overhead;

        @Mixin
        HelpOption help;

        @Override
        public Integer call() throws Exception {
            return lab.run(
                    spec,
                    EnumSet.of(Scenario.OVERHEAD),
                    Options.Config.defaults().with(output).with(bulk).with(overhead),
                    Options.StallKind.UNINTERRUPTIBLE,
                    null);
        }
    }

    @Command(
            name = "stale-reads",
            sortOptions = false,
            description =
                    "Part 6: reads on a shard whose primary cannot write, normal and through the guard's degraded read.")
    static final class StaleReadsCommand implements Callable<Integer> {
        @ParentCommand
        Lab lab;

        @Spec
        CommandSpec spec;

        @Mixin
        Options.Output output;

        @Mixin
        Options.StaleRead staleReads;

        @Mixin
        HelpOption help;

        @Override
        public Integer call() throws Exception {
            return lab.run(
                    spec,
                    EnumSet.of(Scenario.STALE_READS),
                    Options.Config.defaults().with(output).with(staleReads),
                    Options.StallKind.UNINTERRUPTIBLE,
                    null);
        }
    }

    @Command(
            name = "hot-keys",
            sortOptions = false,
            description = {
                "Bulks that repeat a key: 3 x --docs $inc on one _id (ORDERED, replica set) and --docs replacement"
                        + " events over --docs/10 keys (ORDERED, on a replica set and sharded): rounds, commands, mongos rounds and the median"
                        + " time of up to 5 interleaved runs (--runs) for the guard (exact; with last-write-wins"
                        + " compaction), the driver ORDERED and UNORDERED (deduplicated)."
            })
    static final class HotKeysCommand implements Callable<Integer> {
        @ParentCommand
        Lab lab;

        @Spec
        CommandSpec spec;

        @Mixin
        Options.Output output;

        @Mixin
        Options.Bulk bulk;

        @Mixin
        Options.Sharding sharding;

        @Mixin
        Options.OverheadRuns runs;

        @Mixin
        HelpOption help;

        @Override
        public Integer call() throws Exception {
            return lab.run(
                    spec,
                    EnumSet.of(Scenario.HOT_KEYS),
                    Options.Config.defaults()
                            .with(output)
                            .with(bulk)
                            .with(sharding)
                            .with(runs),
                    Options.StallKind.UNINTERRUPTIBLE,
                    null);
        }
    }

    @Command(
            name = "scale",
            sortOptions = false,
            description = {
                "What a fleet running the guard costs a sharded cluster: --instances application instances (each its"
                        + " own client, guard and catalog) through --mongos mongos into each of --shards shard counts"
                        + " with each of --chunks chunks: commands, documents and bytes each instance sends to the"
                        + " config servers (first read, a quiet minute, the minute after a migration), rounds and"
                        + " mongos round trips per ordered bulk against the driver's, the gate's currentOp fan-out,"
                        + " heap per instance. Embedded emulator only."
            })
    static final class ScaleCommand implements Callable<Integer> {
        @ParentCommand
        Lab lab;

        @Spec
        CommandSpec spec;

        @Mixin
        Options.Output output;

        @Option(
                names = "--instances",
                defaultValue = "4",
                description = "application instances (default: ${DEFAULT-VALUE})")
        int instances;

        @Option(names = "--mongos", defaultValue = "2", description = "mongos (default: ${DEFAULT-VALUE})")
        int mongos;

        @Option(
                names = "--shards",
                defaultValue = "5",
                split = ",",
                description = "shard counts, a list runs each (default: ${DEFAULT-VALUE})")
        List<Integer> shards;

        @Option(
                names = "--chunks",
                defaultValue = "1000",
                split = ",",
                description = "chunk counts, a list runs each (default: ${DEFAULT-VALUE})")
        List<Integer> chunks;

        @Mixin
        HelpOption help;

        @Override
        public Integer call() throws Exception {
            lab.refuseUri(spec, output, "scale");
            if (instances < 1
                    || mongos < 1
                    || shards.stream().anyMatch(s -> s < 2)
                    || chunks.stream().anyMatch(c -> c < 1)) {
                throw new picocli.CommandLine.ParameterException(
                        spec.commandLine(),
                        "--instances and --mongos must be at least 1, --shards at least 2 and --chunks at least 1");
            }
            lab.scale = new Scale.Settings(instances, mongos, List.copyOf(shards), List.copyOf(chunks));
            return lab.run(
                    spec,
                    EnumSet.of(Scenario.SCALE),
                    Options.Config.defaults().with(output),
                    Options.StallKind.UNINTERRUPTIBLE,
                    null);
        }
    }

    @Command(
            name = "connect",
            sortOptions = false,
            description = {
                "Kafka Connect: a KRaft broker and a 2-worker Connect cluster in process, the emulated 5-shard cluster,"
                        + " and three sinks consuming the same topic of $inc upserts into their own databases, one"
                        + " after the other: the official MongoSinkConnector with bulk.write.ordered=true (its default)"
                        + " and false, and the guarded sink. Per sink: mongos-to-shard round trips, records/s, server"
                        + " copies, records lost, applied twice, applied and dead-lettered. Embedded emulator only."
            })
    static final class ConnectCommand implements Callable<Integer> {
        @ParentCommand
        Lab lab;

        @Spec
        CommandSpec spec;

        @Mixin
        Options.Output output;

        @Option(names = "--records", defaultValue = "100000", description = "records (default: ${DEFAULT-VALUE})")
        int records;

        @Option(
                names = "--keys",
                defaultValue = "1000",
                description = "distinct _ids the records repeat (default: ${DEFAULT-VALUE})")
        int keys;

        @Option(
                names = "--lost-replies",
                defaultValue = "10",
                description = "the next N update replies at mongos are lost (the write applies, the connection"
                        + " closes) as each sink starts; 0 for none (default: ${DEFAULT-VALUE})")
        int lostReplies;

        @Mixin
        HelpOption help;

        @Override
        public Integer call() throws Exception {
            lab.refuseUri(spec, output, "connect");
            if (records < 1 || records > 10_000_000 || keys < 1 || keys > records || lostReplies < 0) {
                throw new picocli.CommandLine.ParameterException(
                        spec.commandLine(),
                        "--records must be 1 to 10,000,000, --keys 1 to --records and --lost-replies at least 0");
            }
            lab.connect = new ConnectSinks.Settings(records, keys, lostReplies);
            return lab.run(
                    spec,
                    EnumSet.of(Scenario.CONNECT),
                    Options.Config.defaults().with(output),
                    Options.StallKind.UNINTERRUPTIBLE,
                    null);
        }
    }

    @Command(
            name = "faults",
            sortOptions = false,
            description = {
                "The Jepsen-style fault suite, raw driver (3-attempt application loop) against the guard and the"
                        + " reactive guard. Not in the full run.",
                "All run the same seeded workload under failover, restarts, partitions, lost replies, stalls and fail"
                        + " points; prints lost / applied twice / max copies at once / outcome said not applied but it"
                        + " was (minutes at 1,500 operations per client); exits 1 unless both guards' rows are clean."
            })
    static final class FaultsCommand implements Callable<Integer> {
        @ParentCommand
        Lab lab;

        @Option(
                names = "--topology",
                defaultValue = "both",
                description = "replica-set, sharded or both (default: ${DEFAULT-VALUE})")
        String topology;

        @Option(
                names = "--operations",
                defaultValue = "1500",
                description = "operations per client (default: ${DEFAULT-VALUE})")
        int operations;

        @Option(names = "--clients", defaultValue = "3", description = "clients (default: ${DEFAULT-VALUE})")
        int clients;

        @Option(
                names = "--seed",
                defaultValue = "1130",
                description = "the schedule's seed (default: ${DEFAULT-VALUE})")
        long seed;

        @Option(
                names = "--shards",
                defaultValue = "3",
                split = ",",
                description = "shards of the sharded cluster, each"
                        + " 3 replicating members; a list (3,4,5) runs each (default: ${DEFAULT-VALUE})")
        List<Integer> shards;

        @Spec
        CommandSpec spec;

        @Mixin
        HelpOption help;

        @Override
        public Integer call() {
            if (operations < 1 || clients < 1) {
                throw new picocli.CommandLine.ParameterException(
                        spec.commandLine(), "--operations and --clients must be at least 1");
            }
            if (shards.stream().anyMatch(n -> n < 1 || n > 8)) {
                throw new picocli.CommandLine.ParameterException(
                        spec.commandLine(), "--shards must be 1-8 each, not " + shards);
            }
            List<io.github.mongowriteguard.faults.Topology> topologies = switch (topology) {
                case "replica-set" -> List.of(io.github.mongowriteguard.faults.Topology.REPLICA_SET);
                case "sharded" -> List.of(io.github.mongowriteguard.faults.Topology.SHARDED);
                case "both" ->
                    List.of(
                            io.github.mongowriteguard.faults.Topology.REPLICA_SET,
                            io.github.mongowriteguard.faults.Topology.SHARDED);
                default ->
                    throw new picocli.CommandLine.ParameterException(
                            spec.commandLine(),
                            "--topology must be replica-set, sharded or both, not '" + topology + "'");
            };
            List<io.github.mongowriteguard.faults.FaultReport> reports = new ArrayList<>();
            List<io.github.mongowriteguard.faults.FaultConfig> configs = new ArrayList<>();
            for (io.github.mongowriteguard.faults.Topology each : topologies) {
                io.github.mongowriteguard.faults.FaultConfig config =
                        io.github.mongowriteguard.faults.FaultConfig.of(each, seed, clients, operations);
                if (each == io.github.mongowriteguard.faults.Topology.SHARDED) {
                    shards.forEach(n -> configs.add(config.withShards(n)));
                } else {
                    configs.add(config);
                }
            }
            for (io.github.mongowriteguard.faults.FaultConfig config : configs) {
                for (io.github.mongowriteguard.faults.Writer.Kind writer :
                        io.github.mongowriteguard.faults.Writer.Kind.values()) {
                    lab.err.println("faults: " + config.deployment() + ", " + writer + ", seed " + seed + ", " + clients
                            + " x " + operations + " operations");
                    io.github.mongowriteguard.faults.FaultReport report =
                            io.github.mongowriteguard.faults.FaultRun.run(config, writer);
                    // The counts behind the row and the faults the nemesis injected (first violations, if any).
                    lab.err.println(report.describe(10));
                    reports.add(report);
                }
            }
            lab.out.println(io.github.mongowriteguard.faults.FaultTable.of(reports));
            return reports.stream()
                            .filter(r -> r.writer() != io.github.mongowriteguard.faults.Writer.Kind.RAW)
                            .allMatch(io.github.mongowriteguard.faults.FaultReport::clean)
                    ? 0
                    : 1;
        }
    }

    @Command(
            name = "serve",
            description = "Start the emulated replica set and print its URI; serve until stopped (Ctrl-C).")
    static final class ServeCommand implements Callable<Integer> {
        @ParentCommand
        Lab lab;

        @Mixin
        HelpOption help;

        @Override
        public Integer call() throws InterruptedException {
            serve(lab.out);
            return 0;
        }
    }

    @Command(
            name = "jmh",
            description = {
                "Run the JMH benchmarks (every argument goes to org.openjdk.jmh.Main as it is).",
                "For example:",
                "  jmh PlanBenchmark -f 1 -wi 1 -i 3    one class, fewer iterations",
                "  jmh -h                               JMH's own options (-prof gc, -rf json, ...)"
            })
    static final class JmhCommand implements Callable<Integer> {
        @Parameters(paramLabel = "JMH-ARGS", description = "Arguments for JMH.")
        List<String> args = new ArrayList<>();

        @Override
        public Integer call() throws Exception {
            org.openjdk.jmh.Main.main(args.toArray(new String[0]));
            return 0;
        }
    }

    @Command(
            name = "perf",
            sortOptions = false,
            description = {
                "The performance targets in one table: guard and driver in one JVM on the cost-free server,"
                        + " measured in paired runs (one of each path back to back, the order alternating), each ratio the"
                        + " median of the pairs' ratios with its 95%% confidence interval: bulkWrite time and allocation per"
                        + " write, planning + encoding, throughput and CPU per bulk at each thread count, and the series of"
                        + " the cost per write from 1,000 writes up; met / NOT met / too close to call (the interval"
                        + " contains the target). Not in the full run (several minutes with the defaults on a quiet"
                        + " machine)."
            })
    static final class PerfCommand implements Callable<Integer> {
        @ParentCommand
        Lab lab;

        @Spec
        CommandSpec spec;

        @Option(
                names = "--sizes",
                split = ",",
                defaultValue = "1,100,1000,10000,100000",
                description = "bulk sizes, 1 to 100000; the sizes from 1000 up also make the series of the cost per"
                        + " write (default: ${DEFAULT-VALUE})")
        List<Integer> sizes;

        @Option(
                names = "--threads",
                split = ",",
                defaultValue = "1,8,32,64",
                description = "thread counts of the throughput rows (default: ${DEFAULT-VALUE})")
        List<Integer> threads;

        @Option(
                names = "--warmups",
                defaultValue = "10",
                description = "warm-up runs per path and case, at least (default: ${DEFAULT-VALUE})")
        int warmups;

        @Option(
                names = "--warmup-writes",
                defaultValue = "10000",
                description = "writes per path and case in each warm-up, at least: first a pass over every case (both"
                        + " paths, call by call, at least one call each, then one discarded pair) before any case is"
                        + " measured, so that every case is measured in compiled code whatever its place in the order;"
                        + " then each case again right before its pairs, at least --warmups runs (10,000 runs for"
                        + " bulks of 1 write); the same for the guard and the driver. After the pass and after each"
                        + " case's warm-up perf waits until the JIT is idle: nothing queued and nothing finished for"
                        + " 0.5 s (at most 20 s). 0: no pass, only --warmups (default: ${DEFAULT-VALUE})")
        int warmupWrites;

        @Option(
                names = "--runs",
                defaultValue = "21",
                description = "measured pairs of runs per case, one run of each path; from 6 pairs the ratio's interval"
                        + " is a 95%% confidence interval, more pairs narrow it (default: ${DEFAULT-VALUE})")
        int runs;

        @Option(
                names = "--run-ms",
                defaultValue = "40",
                description = "a run's shortest length: each run makes as many calls as the driver makes in this time,"
                        + " at least one, the same number for the guard (default: ${DEFAULT-VALUE})")
        int runMillis;

        @Option(
                names = "--run-calls",
                defaultValue = "8",
                description =
                        "calls per run, at least, as long as they take at most --run-max-ms: a run of a large bulk"
                                + " (10,000 writes) then holds several calls, so that a young GC does not decide a pair; small"
                                + " bulks already make more calls in --run-ms (default: ${DEFAULT-VALUE})")
        int runCalls;

        @Option(
                names = "--run-max-ms",
                defaultValue = "500",
                description = "how long --run-calls may make a run: calls longer than this run one per run (or as"
                        + " --run-ms says), so that bulks of 100,000 writes do not make the run many minutes longer"
                        + " (default: ${DEFAULT-VALUE})")
        int runMaxMillis;

        @Option(
                names = "--rounds",
                defaultValue = "20",
                description = "measured pairs of throughput rounds, one round of each path (default: ${DEFAULT-VALUE})")
        int rounds;

        @Option(
                names = "--seconds",
                defaultValue = "0.5",
                description = "seconds per throughput round, e.g. 0.5 or 2 (default: ${DEFAULT-VALUE})")
        double seconds;

        @Option(
                names = "--plan-writes",
                defaultValue = "100000",
                description = "writes planned and encoded; 0 skips the row (default: ${DEFAULT-VALUE})")
        int planWrites;

        @Option(
                names = "--driver-vs-driver",
                description = "A/A check: the guard's side is a second driver client on its own emulator (planning: the"
                        + " driver's conversion on both sides); every ratio's interval should contain 1, and its width"
                        + " shows this machine's noise")
        boolean driverVsDriver;

        @Mixin
        Options.Output output;

        @Mixin
        HelpOption help;

        @Override
        public Integer call() throws Exception {
            if (sizes.isEmpty()
                    || sizes.stream().anyMatch(n -> n < 1 || n > 100_000)
                    || threads.stream().anyMatch(t -> t < 1)
                    || runs < 1
                    || runMillis < 1
                    || runCalls < 1
                    || runMaxMillis < 1
                    || rounds < 1
                    || !(seconds >= 0.1)
                    || warmups < 0
                    || warmupWrites < 0
                    || planWrites < 0) {
                throw new picocli.CommandLine.ParameterException(
                        spec.commandLine(),
                        "--sizes must be 1 to 100000, --threads,"
                                + " --runs, --run-ms, --run-calls, --run-max-ms and --rounds at least 1, --seconds at least 0.1, --warmups, --warmup-writes and --plan-writes at"
                                + " least 0");
            }
            lab.refuseUri(spec, output, "perf");
            Perf.Result result = Perf.run(
                    new Perf.Settings(
                            sizes,
                            threads,
                            warmups,
                            warmupWrites,
                            runs,
                            rounds,
                            seconds,
                            planWrites,
                            runMillis,
                            runCalls,
                            runMaxMillis,
                            driverVsDriver),
                    lab.log(output));
            lab.report(output, result.toJson(), result::print);
            return 0;
        }
    }

    @Command(
            name = "soak",
            sortOptions = false,
            description = {
                "The soak under faults: one application instance (its own JVM) writing ordered bulks through the guard"
                        + " (settle first) on 2 replicating shards of 3 members for --minutes, a fault every"
                        + " --fault-every seconds in turn (a stall, lost replies, write-concern errors, a stepdown, a"
                        + " failover, a stalled shard); every --sample-seconds its heap after GC, live threads, the"
                        + " sessions the shards used, and every structure its guard holds; whether each is flat over"
                        + " time; the curves in --report. With --cost-free: millions of writes through one guard on the"
                        + " cost-free server instead (--writes, --batch, --every). Not in the full run."
            })
    static final class SoakCommand implements Callable<Integer> {
        @ParentCommand
        Lab lab;

        @Spec
        CommandSpec spec;

        @Option(
                names = "--minutes",
                defaultValue = "2",
                description = "how long the instance writes, 0.1 to 1440 (default: ${DEFAULT-VALUE}; 30 for the soak)")
        double minutes;

        @Option(
                names = "--sample-seconds",
                defaultValue = "10",
                description = "seconds between two samples, 1 to 3600 (default: ${DEFAULT-VALUE})")
        double sampleSeconds;

        @Option(
                names = "--fault-every",
                defaultValue = "15",
                description = "seconds between two faults, 5 to 3600 (default: ${DEFAULT-VALUE})")
        double faultEvery;

        @Option(
                names = "--report",
                paramLabel = "FILE",
                defaultValue = "soak-report.html",
                description = "where the HTML report with the curves goes (default: ${DEFAULT-VALUE})")
        Path report;

        @Option(
                names = "--cost-free",
                description = "millions of writes through one guard on the cost-free server instead")
        boolean costFree;

        @Option(
                names = "--writes",
                defaultValue = "10000000",
                description = "--cost-free: writes in all (default: ${DEFAULT-VALUE})")
        long writes;

        @Option(
                names = "--batch",
                defaultValue = "1000",
                description = "--cost-free: writes per bulkWrite, 1 to 100000 (default: ${DEFAULT-VALUE})")
        int batch;

        @Option(
                names = "--every",
                defaultValue = "1000000",
                description = "--cost-free: writes between two lines (default: ${DEFAULT-VALUE})")
        long every;

        @Mixin
        Options.Output output;

        @Mixin
        HelpOption help;

        @Override
        public Integer call() throws Exception {
            if (writes < 1 || batch < 1 || batch > 100_000 || every < 1) {
                throw new picocli.CommandLine.ParameterException(
                        spec.commandLine(), "--writes and --every must be at least 1, --batch 1 to 100000");
            }
            if (!(minutes >= 0.1 && minutes <= 1440)
                    || !(sampleSeconds >= 1 && sampleSeconds <= 3600)
                    || !(faultEvery >= 5 && faultEvery <= 3600)) {
                throw new picocli.CommandLine.ParameterException(
                        spec.commandLine(),
                        "--minutes must be 0.1 to 1440, --sample-seconds 1 to 3600 and --fault-every 5 to 3600;"
                                + " use e.g. --minutes 30");
            }
            lab.refuseUri(spec, output, "soak");
            PrintStream log = lab.log(output);
            if (costFree) {
                // The lines are the table, printed as they are measured; with --json they are progress, then one
                // object.
                List<Soak.Line> lines = Soak.run(writes, batch, every, output.json ? log : lab.out, log);
                lab.report(output, Soak.toJson(writes, batch, every, lines), out -> {});
                return 0;
            }
            FaultSoak.Settings settings = new FaultSoak.Settings(
                    minutes,
                    sampleSeconds,
                    faultEvery,
                    FaultSoak.Settings.DEFAULT.socketTimeoutMs(),
                    FaultSoak.Settings.DEFAULT.pollSize(),
                    FaultSoak.Settings.DEFAULT.keys(),
                    FaultSoak.Settings.DEFAULT.instanceHeap(),
                    FaultSoak.Settings.DEFAULT.seed(),
                    FaultSoak.Settings.DEFAULT.pollIntervalMs());
            FaultSoak.Result result = FaultSoak.run(settings, log);
            String args = String.join(" ", spec.commandLine().getParseResult().originalArgs());
            Files.writeString(
                    report, SoakReport.render(result, "java -jar lab.jar soak " + args), StandardCharsets.UTF_8);
            log.printf("report written to %s%n", report.toAbsolutePath());
            lab.report(output, result.toJson(), result::print);
            return 0;
        }
    }

    @Command(
            name = "payloads",
            sortOptions = false,
            description = {
                "Large payloads on the cost-free server, guard vs driver: commands sent, bytes received by the server,"
                        + " median time and the client's allocation per bulk, for 1,000 x 1 MiB and 100,000 x 1 KiB unordered inserts."
            })
    static final class PayloadsCommand implements Callable<Integer> {
        @ParentCommand
        Lab lab;

        @Spec
        CommandSpec spec;

        @Option(
                names = "--runs",
                defaultValue = "5",
                description = "measured runs per path and case (default: ${DEFAULT-VALUE})")
        int runs;

        @Option(
                names = "--case",
                paramLabel = "COUNTxBYTES",
                split = ",",
                defaultValue = "1000x1048576,100000x1024",
                description = "bulks as documents x payload bytes (default: ${DEFAULT-VALUE})")
        List<String> cases;

        @Mixin
        Options.Output output;

        @Mixin
        HelpOption help;

        @Override
        public Integer call() throws Exception {
            List<int[]> parsed = new ArrayList<>();
            for (String each : cases) {
                String[] parts = each.split("x");
                try {
                    parsed.add(new int[] {Integer.parseInt(parts[0]), Integer.parseInt(parts[1])});
                } catch (RuntimeException e) {
                    throw new picocli.CommandLine.ParameterException(
                            spec.commandLine(), "--case '" + each + "' must be COUNTxBYTES, e.g. 1000x1048576");
                }
                if (parts.length != 2 || parsed.get(parsed.size() - 1)[0] < 1 || parsed.get(parsed.size() - 1)[1] < 0) {
                    throw new picocli.CommandLine.ParameterException(
                            spec.commandLine(),
                            "--case '" + each + "' must be COUNTxBYTES with COUNT at least 1, e.g. 1000x1048576");
                }
            }
            if (runs < 1) {
                throw new picocli.CommandLine.ParameterException(spec.commandLine(), "--runs must be at least 1");
            }
            lab.refuseUri(spec, output, "payloads");
            List<Payloads.Case> results = Payloads.run(parsed, runs, lab.log(output));
            lab.report(output, Payloads.toJson(results, runs), out -> Payloads.print(results, runs, out));
            return 0;
        }
    }

    @Command(
            name = "reactive",
            sortOptions = false,
            description = {
                "The reactive guard against the reactive driver (same client settings), in one run: time per bulkWrite"
                        + " on the cost-free server and on sharded {_id: \"hashed\"} (paired, interleaved runs), mongos"
                        + " round trips of one ORDERED bulk of upserts by _id, and throughput with many concurrent"
                        + " subscribers."
            })
    static final class ReactiveCommand implements Callable<Integer> {
        @ParentCommand
        Lab lab;

        @Spec
        CommandSpec spec;

        @Option(
                names = "--sizes",
                split = ",",
                defaultValue = "1,100,1000,10000",
                description = "writes per bulk of the time rows (default: ${DEFAULT-VALUE})")
        List<Integer> sizes;

        @Option(
                names = "--runs",
                defaultValue = "11",
                description = "pairs of runs per time row (default: ${DEFAULT-VALUE})")
        int runs;

        @Option(
                names = "--run-ms",
                defaultValue = "100",
                description = "a run repeats its bulk for this long, at least once (default: ${DEFAULT-VALUE})")
        int runMillis;

        @Option(
                names = "--shards",
                defaultValue = "5",
                description = "shards of the emulated cluster (default: ${DEFAULT-VALUE})")
        int shards;

        @Option(
                names = "--ordered-writes",
                defaultValue = "1000",
                description = "upserts of the ORDERED bulk whose round trips are counted (default: ${DEFAULT-VALUE})")
        int orderedWrites;

        @Option(
                names = "--subscribers",
                defaultValue = "64",
                description = "bulks in flight at once in the throughput rows (default: ${DEFAULT-VALUE})")
        int subscribers;

        @Option(
                names = "--throughput-writes",
                defaultValue = "100",
                description = "writes per bulk in the throughput rows (default: ${DEFAULT-VALUE})")
        int throughputWrites;

        @Option(
                names = "--rounds",
                defaultValue = "11",
                description = "pairs of throughput windows (default: ${DEFAULT-VALUE})")
        int rounds;

        @Option(
                names = "--window-ms",
                defaultValue = "500",
                description = "length of one throughput window (default: ${DEFAULT-VALUE})")
        int windowMillis;

        @Option(
                names = "--warmup-ms",
                defaultValue = "2000",
                description = "each path of a row repeats its bulk this long before the row's pairs, for the JIT"
                        + " (default: ${DEFAULT-VALUE})")
        int warmupMillis;

        @Mixin
        Options.Output output;

        @Mixin
        HelpOption help;

        @Override
        public Integer call() throws Exception {
            if (sizes.stream().anyMatch(size -> size < 1)) {
                throw new picocli.CommandLine.ParameterException(
                        spec.commandLine(), "--sizes: every bulk needs at least 1 write, e.g. --sizes 1,100");
            }
            if (runs < 1
                    || runMillis < 0
                    || shards < 2
                    || orderedWrites < 1
                    || subscribers < 1
                    || throughputWrites < 1
                    || rounds < 1
                    || windowMillis < 1
                    || warmupMillis < 0) {
                throw new picocli.CommandLine.ParameterException(
                        spec.commandLine(),
                        "--runs, --ordered-writes, --subscribers, --throughput-writes, --rounds and --window-ms must be"
                                + " at least 1, --run-ms and --warmup-ms at least 0 and --shards at least 2");
            }
            lab.refuseUri(spec, output, "reactive");
            Reactive.Result result = Reactive.run(
                    new Reactive.Settings(
                            List.copyOf(sizes),
                            runs,
                            runMillis,
                            shards,
                            orderedWrites,
                            subscribers,
                            throughputWrites,
                            rounds,
                            windowMillis,
                            warmupMillis),
                    lab.log(output));
            lab.report(output, Reactive.toJson(result), out -> Reactive.print(result, out));
            return 0;
        }
    }

    @Command(
            name = "settle",
            sortOptions = false,
            description = {
                "A queue consumer under faults (lost replies, socket timeouts, stalls, write-concern errors, stepdowns,"
                        + " failovers): the raw driver retrying whole polls against the guard with the README's recipe"
                        + " (settle first). Events lost, applied twice, dead-lettered (and applied anyway), unknown left,"
                        + " time per poll."
            })
    static final class SettleCommand implements Callable<Integer> {
        @ParentCommand
        Lab lab;

        @Spec
        CommandSpec spec;

        @Option(names = "--events", defaultValue = "2000", description = "events in all (default: ${DEFAULT-VALUE})")
        int events;

        @Option(
                names = "--poll-size",
                defaultValue = "100",
                description = "events per poll (default: ${DEFAULT-VALUE})")
        int pollSize;

        @Option(names = "--keys", defaultValue = "50", description = "distinct _ids (default: ${DEFAULT-VALUE})")
        int keys;

        @Option(
                names = "--socket-timeout-ms",
                defaultValue = "1000",
                description = "the clients' socket read timeout, 200 to 60000 (default: ${DEFAULT-VALUE})")
        int socketTimeoutMs;

        @Option(
                names = "--attempts",
                defaultValue = "3",
                description = "the raw consumer's executions of a poll, and the guard's attempts per copy, 1 to 10"
                        + " (default: ${DEFAULT-VALUE})")
        int attempts;

        @Option(
                names = "--fault",
                split = ",",
                defaultValue = "lost-replies,socket-timeout,stall,write-concern-error,stepdown,failover",
                description = "the fault types to run (default: ${DEFAULT-VALUE})")
        List<String> faults;

        @Option(names = "--seed", defaultValue = "42", description = "the events' seed (default: ${DEFAULT-VALUE})")
        long seed;

        @Mixin
        Options.Output output;

        @Mixin
        HelpOption help;

        @Override
        public Integer call() throws Exception {
            List<Settling.Fault> kinds = new ArrayList<>();
            for (String each : faults) {
                try {
                    kinds.add(Settling.Fault.of(each));
                } catch (IllegalArgumentException e) {
                    throw new picocli.CommandLine.ParameterException(spec.commandLine(), "--fault: " + e.getMessage());
                }
            }
            require(events >= 1 && events <= 1_000_000, "--events must be 1 to 1,000,000");
            require(pollSize >= 1 && pollSize <= 100_000, "--poll-size must be 1 to 100,000");
            require(keys >= 1 && keys <= 1_000_000, "--keys must be 1 to 1,000,000");
            require(socketTimeoutMs >= 200 && socketTimeoutMs <= 60_000, "--socket-timeout-ms must be 200 to 60000");
            require(attempts >= 1 && attempts <= 10, "--attempts must be 1 to 10");
            lab.refuseUri(spec, output, "settle");
            Settling.Settings settings = new Settling.Settings(events, pollSize, keys, socketTimeoutMs, attempts, seed);
            List<Settling.Row> rows = Settling.run(settings, kinds, lab.log(output));
            lab.report(output, Settling.toJson(settings, rows), out -> Settling.print(settings, rows, out));
            return 0;
        }

        private void require(boolean condition, String message) {
            if (!condition) {
                throw new picocli.CommandLine.ParameterException(spec.commandLine(), message);
            }
        }
    }

    /**
     * Runs the given scenarios, prints their tables or one JSON object, writes {@code --json-out} and (for the full
     * run) the report.
     *
     * @param stallFallback the retries' stall when {@code --stall} was not given
     * @param report        where to write the HTML report, or null for none
     * @return the exit code
     */
    int run(
            CommandSpec command,
            Set<Scenario> scenarios,
            Options.Config config,
            Options.StallKind stallFallback,
            Path report)
            throws Exception {
        config.validate(command);
        Progress progress = Progress.to(err, config.output().progress);
        Results results;
        try {
            results = runScenarios(scenarios, config, stallFallback, scale, connect, progress);
        } finally {
            progress.close(); // the bar ends here; notes below are plain lines
        }
        String reportPath = null;
        if (report != null) {
            String args =
                    String.join(" ", command.commandLine().getParseResult().originalArgs());
            String commandLine = "java -jar lab.jar" + (args.isBlank() ? "" : " " + hideUri(args));
            Files.writeString(report, HtmlReport.render(results, commandLine), StandardCharsets.UTF_8);
            reportPath = report.toString();
            progress.note("report written to %s", report.toAbsolutePath());
        }
        String json = LabJson.write(json(scenarios, results, reportPath));
        if (config.output().jsonOut != null) {
            Files.writeString(config.output().jsonOut, json + "\n", StandardCharsets.UTF_8);
            progress.note("JSON written to %s", config.output().jsonOut.toAbsolutePath());
        }
        if (config.output().json) {
            out.println(json);
        } else {
            print(results, out);
            if (reportPath != null) {
                out.printf("%nreport: %s%n", reportPath);
            }
        }
        out.flush();
        return 0;
    }

    /** Where a command outside the full run writes its progress lines: stderr, or nowhere with --progress none. */
    PrintStream log(Options.Output output) {
        return output.progress == Progress.Mode.NONE ? new PrintStream(OutputStream.nullOutputStream()) : err;
    }

    /** The cost-free server is in the process: a command that runs only there refuses --uri instead of ignoring it. */
    void refuseUri(CommandSpec command, Options.Output output, String name) {
        if (output.uri != null) {
            throw new picocli.CommandLine.ParameterException(
                    command.commandLine(),
                    "--uri: " + name + " measures the guard against the driver on the embedded cost-free server only;"
                            + " run it without --uri");
        }
    }

    /** Prints the tables, or with --json one JSON object; --json-out writes that object to its file too. */
    void report(Options.Output output, Map<String, Object> json, java.util.function.Consumer<PrintStream> tables)
            throws java.io.IOException {
        String text = LabJson.write(json);
        if (output.jsonOut != null) {
            Files.writeString(output.jsonOut, text + "\n", StandardCharsets.UTF_8);
            if (output.progress != Progress.Mode.NONE) {
                err.println("JSON written to " + output.jsonOut.toAbsolutePath());
            }
        }
        if (output.json) {
            out.println(text);
        } else {
            tables.accept(out);
        }
        out.flush();
    }

    /** Runs the scenarios in order, scale and connect at their defaults. */
    static Results runScenarios(
            Set<Scenario> scenarios, Options.Config config, Options.StallKind stallFallback, Progress progress)
            throws Exception {
        return runScenarios(
                scenarios, config, stallFallback, Scale.Settings.DEFAULT, ConnectSinks.Settings.DEFAULT, progress);
    }

    /** Runs the scenarios in order, with one progress bar (or phase lines) across all of them. */
    static Results runScenarios(
            Set<Scenario> scenarios,
            Options.Config config,
            Options.StallKind stallFallback,
            Scale.Settings scale,
            ConnectSinks.Settings connect,
            Progress progress)
            throws Exception {
        if (config.uri() != null) {
            progress.note("running against the deployment given by --uri (its address is not printed)");
        }
        long units = 0;
        for (Scenario scenario : scenarios) {
            units += switch (scenario) {
                case ROUNDTRIPS -> RoundTrips.units(config);
                case LATENCY -> Latency.units(config);
                case RETRIES -> Retries.units(config, stallFallback);
                case OVERHEAD -> Overhead.units(config);
                case STALE_READS -> StaleReads.units(config);
                case HOT_KEYS -> HotKeys.units(config);
                case SCALE -> config.uri() == null ? Scale.units(scale) : 0;
                case CONNECT -> config.uri() == null ? ConnectSinks.units(connect) : 0;
            };
        }
        progress.start(units);
        return new Results(
                scenarios.contains(Scenario.ROUNDTRIPS) ? RoundTrips.run(config, progress) : null,
                scenarios.contains(Scenario.LATENCY) ? Latency.run(config, progress) : null,
                scenarios.contains(Scenario.RETRIES) ? Retries.run(config, stallFallback, progress) : null,
                scenarios.contains(Scenario.OVERHEAD) ? Overhead.run(config, progress) : null,
                scenarios.contains(Scenario.STALE_READS) ? StaleReads.run(config, progress) : null,
                scenarios.contains(Scenario.HOT_KEYS) && config.uri() == null ? HotKeys.run(config, progress) : null,
                scenarios.contains(Scenario.SCALE) && config.uri() == null ? Scale.run(scale, progress) : null,
                scenarios.contains(Scenario.CONNECT) && config.uri() == null
                        ? ConnectSinks.run(connect, progress)
                        : null);
    }

    static void print(Results results, PrintStream out) {
        if (results.roundTrips() != null) {
            results.roundTrips().print(out);
        }
        if (results.latency() != null) {
            results.latency().print(out);
        }
        if (results.retries() != null) {
            results.retries().print(out);
        }
        if (results.overhead() != null) {
            results.overhead().print(out);
        }
        if (results.staleReads() != null) {
            results.staleReads().print(out);
        }
        if (results.hotKeys() != null) {
            results.hotKeys().print(out);
        }
        if (results.scale() != null) {
            results.scale().print(out);
        }
        if (results.connect() != null) {
            results.connect().print(out);
        }
    }

    /** One scenario's object as it is, or for several one object with a field per scenario and the report's path. */
    static Map<String, Object> json(Set<Scenario> scenarios, Results results, String report) {
        if (scenarios.size() == 1) {
            return switch (scenarios.iterator().next()) {
                case ROUNDTRIPS -> results.roundTrips().toJson();
                case LATENCY -> results.latency().toJson();
                case RETRIES -> results.retries().toJson();
                case OVERHEAD -> results.overhead().toJson();
                case STALE_READS -> results.staleReads().toJson();
                case HOT_KEYS -> hotKeysJson(results);
                case SCALE -> scaleJson(results);
                case CONNECT -> connectJson(results);
            };
        }
        Map<String, Object> json = new LinkedHashMap<>();
        for (Scenario scenario : scenarios) {
            json.put(
                    scenario.key,
                    switch (scenario) {
                        case ROUNDTRIPS -> results.roundTrips().toJson();
                        case LATENCY -> results.latency().toJson();
                        case RETRIES -> results.retries().toJson();
                        case OVERHEAD -> results.overhead().toJson();
                        case STALE_READS -> results.staleReads().toJson();
                        case HOT_KEYS -> hotKeysJson(results);
                        case SCALE -> scaleJson(results);
                        case CONNECT -> connectJson(results);
                    });
        }
        json.put("report", report);
        return json;
    }

    /** The hot-keys object; with --uri (emulator counts only) a note instead. */
    private static Map<String, Object> hotKeysJson(Results results) {
        if (results.hotKeys() != null) {
            return results.hotKeys().toJson();
        }
        return Map.of(
                "note", "hot-keys runs on the embedded emulator only (it counts mongos rounds); not run with --uri");
    }

    /** The scale object; with --uri (emulator only) a note instead. */
    private static Map<String, Object> scaleJson(Results results) {
        if (results.scale() != null) {
            return results.scale().toJson();
        }
        return Map.of("note", "scale runs on the embedded emulator only (it builds its clusters); not run with --uri");
    }

    /** The connect object; with --uri (emulator and in-process Kafka only) a note instead. */
    private static Map<String, Object> connectJson(Results results) {
        if (results.connect() != null) {
            return results.connect().toJson();
        }
        return Map.of(
                "note",
                "connect runs on the embedded emulator and an in-process Kafka and Connect cluster only; not run with"
                        + " --uri");
    }

    /** The command line as the report shows it: a connection string may hold a password, so it is never printed. */
    static String hideUri(String args) {
        return args.replaceAll("--uri(=|\\s+)\\S+", "--uri <hidden>");
    }

    static void serve(PrintStream out) throws InterruptedException {
        EmulatedReplicaSet cluster = EmulatedCluster.replicaSet().start();
        CountDownLatch stopped = new CountDownLatch(1);
        Runtime.getRuntime().addShutdownHook(new Thread(() -> {
            cluster.close();
            stopped.countDown();
        }));
        out.println(cluster.connectionString());
        out.flush();
        stopped.await();
    }
}
