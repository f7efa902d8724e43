package io.github.mongowriteguard.benchmarks.lab;

import java.io.IOException;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.concurrent.CountDownLatch;

import io.github.mongowriteguard.testkit.EmulatedCluster;
import io.github.mongowriteguard.testkit.EmulatedReplicaSet;

/**
 * The lab: runs the articles' scenarios on the embedded emulated cluster (or, with {@code --uri}, on a real
 * deployment, skipping what needs the emulator) and prints what the server saw. Progress goes to stderr; stdout
 * carries the tables, or with {@code --json} exactly one JSON object.
 *
 * <pre>
 * java -jar benchmarks/target/lab.jar                        # every scenario, tables, lab-report.html
 * java -jar benchmarks/target/lab.jar roundtrips --shards 4  # part 1: round trips per client vs 1+(n-1)(1-1/S)
 * java -jar benchmarks/target/lab.jar latency --json         # part 1: Little's-law table, measured
 * java -jar benchmarks/target/lab.jar retries --stall both   # part 2: sends, copies, documents per retry
 * java -jar benchmarks/target/lab.jar overhead               # guard vs raw driver on one replica set
 * java -jar benchmarks/target/lab.jar jmh -f 1 -wi 1 -i 3    # the JMH benchmarks
 * java -jar benchmarks/target/lab.jar serve                  # an emulated replica set until stopped
 * </pre>
 */
public final class Lab {
    private Lab() {
    }

    public static void main(String[] args) throws Exception {
        if (args.length > 0 && args[0].equals("stale-reads")) {
            // Seed part 6: reads on a shard whose primary cannot write (its own options, see StaleReads).
            StaleReads.run(System.out, java.util.Arrays.asList(args).contains("--json"), args);
            return;
        }
        LabOptions options;
        try {
            options = LabOptions.parse(args);
        } catch (IllegalArgumentException e) {
            System.err.println("lab: " + e.getMessage());
            System.exit(2);
            return;
        }
        switch (options.command()) {
            case "help" -> System.out.print(LabOptions.usage());
            case "serve" -> serve(System.out);
            case "jmh" -> org.openjdk.jmh.Main.main(options.rest().toArray(new String[0]));
            default -> {
                int code = run(options, System.out, new Progress(System.err), String.join(" ", args));
                System.exit(code);
            }
        }
    }

    /** Runs one scenario or all of them and prints tables or one JSON object. @return the exit code */
    static int run(LabOptions options, PrintStream out, Progress progress, String argsLine) throws Exception {
        String command = options.command();
        boolean all = command.equals("all");
        if (options.text("uri") != null) {
            progress.step("running against the deployment given by --uri (its address is not printed)");
        }
        RoundTrips.Result roundTrips = all || command.equals("roundtrips") ? RoundTrips.run(options, progress) : null;
        Latency.Result latency = all || command.equals("latency") ? Latency.run(options, progress) : null;
        LabOptions retryOptions = all && !options.given("stall") ? withBothStalls(options) : options;
        Retries.Result retries = all || command.equals("retries") ? Retries.run(retryOptions, progress) : null;
        Overhead.Result overhead = all || command.equals("overhead") ? Overhead.run(options, progress) : null;

        String report = null;
        if (all) {
            Path path = Path.of(options.text("report"));
            String commandLine = "java -jar lab.jar" + (argsLine.isBlank() ? "" : " " + argsLine.replaceAll("--uri(=|\\s+)\\S+", "--uri <hidden>"));
            Files.writeString(path, HtmlReport.render(roundTrips, latency, retries, overhead, commandLine), StandardCharsets.UTF_8);
            report = path.toString();
            progress.step("report written to %s", path.toAbsolutePath());
        }
        String json = Json.write(json(command, roundTrips, latency, retries, overhead, report));
        if (options.text("json-out") != null) {
            Path path = Path.of(options.text("json-out"));
            Files.writeString(path, json + "\n", StandardCharsets.UTF_8);
            progress.step("JSON written to %s", path.toAbsolutePath());
        }
        if (options.flag("json")) {
            out.println(json);
        } else {
            if (roundTrips != null) {
                roundTrips.print(out);
            }
            if (latency != null) {
                latency.print(out);
            }
            if (retries != null) {
                retries.print(out);
            }
            if (overhead != null) {
                overhead.print(out);
            }
            if (report != null) {
                out.printf("%nreport: %s%n", report);
            }
        }
        out.flush();
        return 0;
    }

    /** One scenario's object as it is, or for the full run one object with a field per scenario. */
    static Map<String, Object> json(String command, RoundTrips.Result roundTrips, Latency.Result latency, Retries.Result retries,
                                    Overhead.Result overhead, String report) {
        switch (command) {
            case "roundtrips":
                return roundTrips.toJson();
            case "latency":
                return latency.toJson();
            case "retries":
                return retries.toJson();
            case "overhead":
                return overhead.toJson();
            default:
                Map<String, Object> json = new LinkedHashMap<>();
                json.put("roundtrips", roundTrips.toJson());
                json.put("latency", latency.toJson());
                json.put("retries", retries.toJson());
                json.put("overhead", overhead.toJson());
                json.put("report", report);
                return json;
        }
    }

    private static LabOptions withBothStalls(LabOptions options) {
        return options.withStall("both");
    }

    static void serve(PrintStream out) throws InterruptedException {
        EmulatedReplicaSet cluster = EmulatedCluster.replicaSet().start();
        CountDownLatch stopped = new CountDownLatch(1);
        Runtime.getRuntime().addShutdownHook(new Thread(() -> {
            cluster.close();
            stopped.countDown();
        }));
        out.println(cluster.connectionString());
        stopped.await();
    }
}
