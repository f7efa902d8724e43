package io.github.mongowriteguard.benchmarks.lab;

import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * The lab's command line: one command and {@code --name value} options, checked against the table below so that a
 * mistyped option or value fails before anything runs, with a message that names the option, the value and a fix.
 *
 * <pre>{@code
 * LabOptions options = LabOptions.parse("roundtrips", "--shards", "4", "--json");
 * options.intValue("shards");   // 4
 * }</pre>
 */
public final class LabOptions {

    /** Commands, in the order the full run ({@code all}) runs the scenarios. */
    public static final List<String> SCENARIOS = List.of("roundtrips", "latency", "retries", "overhead");
    static final Set<String> COMMANDS = Set.of("all", "roundtrips", "latency", "retries", "overhead", "serve", "jmh", "help");

    /** One option: its kind, bounds, default and the commands it applies to ({@code all} takes every option). */
    record Spec(String name, Kind kind, double min, double max, Object defaultValue, Set<String> commands, String help) {
    }

    enum Kind { INT, DECIMAL, TEXT, FLAG, STALL }

    static final Map<String, Spec> SPECS = new LinkedHashMap<>();

    static {
        Set<String> every = Set.of("roundtrips", "latency", "retries", "overhead");
        add("json", Kind.FLAG, 0, 0, false, every, "print one JSON object on stdout instead of tables");
        add("json-out", Kind.TEXT, 0, 0, null, every, "also write the JSON object to this file (stdout keeps the tables)");
        add("uri", Kind.TEXT, 0, 0, null, every, "run against this real deployment instead of the emulator");
        add("report", Kind.TEXT, 0, 0, "lab-report.html", Set.of(), "where the full run writes its HTML report");
        add("shards", Kind.INT, 1, 64, 5, Set.of("roundtrips", "latency"), "shards of the emulated cluster");
        add("docs", Kind.INT, 1, 100_000, 1000, Set.of("roundtrips", "latency", "overhead"), "documents per bulk");
        add("seed", Kind.INT, 0, Integer.MAX_VALUE, 1, Set.of("roundtrips", "latency"), "random seed of the bulk's keys");
        add("rtt-ms", Kind.DECIMAL, 0, 1000, 1.0, Set.of("latency"), "mongos-to-shard round trip");
        add("per-doc-ms", Kind.DECIMAL, 0, 1000, 0.2, Set.of("latency"), "cost of one document on a shard");
        add("slow-shard-factor", Kind.DECIMAL, 1, 1000, 10.0, Set.of("latency"), "how much slower the slow shard is");
        add("arrival-per-s", Kind.DECIMAL, 0.001, 1_000_000, 20.0, Set.of("latency"), "bulks arriving per second (Little's law)");
        add("repetitions", Kind.INT, 1, 1000, 5, Set.of("latency"), "measured runs per case (median reported)");
        add("runs", Kind.INT, 1, 10_000, 15, Set.of("overhead"), "measured runs per client, interleaved (median reported)");
        add("app-attempts", Kind.INT, 1, 20, 4, Set.of("retries"), "application executions of the insert");
        add("socket-timeout-ms", Kind.INT, 50, 60_000, 300, Set.of("retries"), "client socket read timeout");
        add("stall", Kind.STALL, 0, 0, "uninterruptible", Set.of("retries"),
            "interruptible (maxTimeMS stops it), uninterruptible (runs to its end) or both");
    }

    private static void add(String name, Kind kind, double min, double max, Object defaultValue, Set<String> commands, String help) {
        SPECS.put(name, new Spec(name, kind, min, max, defaultValue, commands, help));
    }

    private final String command;
    private final Map<String, Object> values;
    private final Set<String> given;
    private final List<String> rest;

    private LabOptions(String command, Map<String, Object> values, Set<String> given, List<String> rest) {
        this.command = command;
        this.values = values;
        this.given = given;
        this.rest = rest;
    }

    /**
     * Parses a command line; no command means {@code all}. {@code jmh} passes everything after it to JMH untouched.
     *
     * @throws IllegalArgumentException for an unknown command or option, a missing or malformed value, or a value
     *                                  out of range; the message names it and says what to use instead
     */
    public static LabOptions parse(String... args) {
        int i = 0;
        String command = "all";
        if (args.length > 0 && !args[0].startsWith("--")) {
            command = args[0];
            i = 1;
            if (!COMMANDS.contains(command)) {
                throw new IllegalArgumentException("unknown command '" + command + "'; commands are: "
                    + String.join(", ", new java.util.TreeSet<>(COMMANDS)) + " (no command runs every scenario)");
            }
        }
        if (args.length == 1 && (args[0].equals("--help") || args[0].equals("-h"))) {
            command = "help";
            i = 1;
        }
        Map<String, Object> values = new LinkedHashMap<>();
        SPECS.values().forEach(s -> values.put(s.name(), s.defaultValue()));
        if (command.equals("jmh")) {
            List<String> rest = new ArrayList<>(List.of(args).subList(i, args.length));
            return new LabOptions(command, values, Set.of(), rest);
        }
        Set<String> given = new java.util.LinkedHashSet<>();
        for (; i < args.length; i++) {
            String arg = args[i];
            if (!arg.startsWith("--")) {
                throw new IllegalArgumentException("unexpected argument '" + arg + "': options are written --name value;"
                    + " see java -jar lab.jar help");
            }
            String name = arg.substring(2);
            String inline = null;
            int eq = name.indexOf('=');
            if (eq >= 0) {
                inline = name.substring(eq + 1);
                name = name.substring(0, eq);
            }
            Spec spec = SPECS.get(name);
            if (spec == null) {
                throw new IllegalArgumentException("unknown option --" + name + "; options of '" + command + "' are: "
                    + String.join(", ", optionsOf(command)));
            }
            if (!command.equals("all") && !spec.commands().contains(command)) {
                throw new IllegalArgumentException("option --" + name + " does not apply to '" + command + "'; it applies to: "
                    + (spec.commands().isEmpty() ? "the full run (no command)" : String.join(", ", new java.util.TreeSet<>(spec.commands()))));
            }
            if (spec.kind() == Kind.FLAG) {
                if (inline != null) {
                    throw new IllegalArgumentException("--" + name + " takes no value; write just --" + name);
                }
                values.put(name, true);
                given.add(name);
                continue;
            }
            String raw = inline;
            if (raw == null) {
                if (i + 1 >= args.length || args[i + 1].startsWith("--")) {
                    throw new IllegalArgumentException("--" + name + " needs a value, e.g. --" + name + " " + example(spec));
                }
                raw = args[++i];
            }
            values.put(name, convert(spec, raw));
            given.add(name);
        }
        return new LabOptions(command, values, Collections.unmodifiableSet(given), List.of());
    }

    private static Object convert(Spec spec, String raw) {
        String name = "--" + spec.name();
        switch (spec.kind()) {
            case INT: {
                long value;
                try {
                    value = Long.parseLong(raw.trim().replace("_", ""));
                } catch (NumberFormatException e) {
                    throw new IllegalArgumentException(name + ": '" + raw + "' is not a whole number; use e.g. " + name + " " + example(spec));
                }
                checkRange(spec, value, raw);
                return (int) value;
            }
            case DECIMAL: {
                double value;
                try {
                    value = Double.parseDouble(raw.trim());
                } catch (NumberFormatException e) {
                    throw new IllegalArgumentException(name + ": '" + raw + "' is not a number; use e.g. " + name + " " + example(spec));
                }
                if (!Double.isFinite(value)) {
                    throw new IllegalArgumentException(name + ": '" + raw + "' is not a finite number; use e.g. " + name + " " + example(spec));
                }
                checkRange(spec, value, raw);
                return value;
            }
            case STALL:
                if (!Set.of("interruptible", "uninterruptible", "both").contains(raw)) {
                    throw new IllegalArgumentException(name + ": '" + raw + "' is not a stall kind; use interruptible,"
                        + " uninterruptible or both");
                }
                return raw;
            default:
                if (raw.isBlank()) {
                    throw new IllegalArgumentException(name + " must not be empty");
                }
                return raw;
        }
    }

    private static void checkRange(Spec spec, double value, String raw) {
        if (value < spec.min() || value > spec.max()) {
            throw new IllegalArgumentException("--" + spec.name() + " (" + raw + ") must be between " + format(spec.min())
                + " and " + format(spec.max()) + "; use e.g. --" + spec.name() + " " + example(spec));
        }
    }

    private static String format(double d) {
        return d == Math.rint(d) && Math.abs(d) < 1e15 ? String.valueOf((long) d) : String.valueOf(d);
    }

    private static String example(Spec spec) {
        Object d = spec.defaultValue();
        if (d == null) {
            return spec.name().equals("uri") ? "mongodb://host:27017/" : "lab.json";
        }
        return d instanceof Double ? format((Double) d) : String.valueOf(d);
    }

    static List<String> optionsOf(String command) {
        List<String> names = new ArrayList<>();
        SPECS.values().stream().filter(s -> command.equals("all") || s.commands().contains(command))
            .forEach(s -> names.add("--" + s.name()));
        return names;
    }

    /** The usage text printed by {@code help}. */
    public static String usage() {
        StringBuilder text = new StringBuilder("""
            usage: java -jar lab.jar [command] [options]
              (no command)  every scenario at the articles' parameters; tables, and the HTML report (--report)
              roundtrips    mongos-to-shard round trips of one hashed-key bulk per client, next to 1+(n-1)(1-1/S)
              latency       wall time per bulk, normal and with one slow shard; Little's-law bulks in flight
              retries       part 2: sends, copies and documents per application retry (raw driver vs guarded)
              overhead      guarded vs raw driver on one replica set, interleaved, ratio of medians
              stale-reads   part 6: reads on a shard whose primary cannot write, normal and degraded (--json)
              serve         start the emulated replica set and print its URI until stopped
              jmh [args]    run the JMH benchmarks (args go to org.openjdk.jmh.Main, e.g. -f 1 -wi 1 -i 3)
            options:
            """);
        for (Spec spec : SPECS.values()) {
            String def = spec.kind() == Kind.FLAG || spec.defaultValue() == null ? "" : " (default " + example(spec) + ")";
            text.append(String.format("  --%-18s %s%s%n", spec.name(), spec.help(), def));
        }
        return text.toString();
    }

    public String command() {
        return command;
    }

    /** Arguments after {@code jmh}. */
    public List<String> rest() {
        return rest;
    }

    public int intValue(String name) {
        return (Integer) value(name);
    }

    public double decimal(String name) {
        return (Double) value(name);
    }

    public String text(String name) {
        return (String) value(name);
    }

    public boolean flag(String name) {
        return (Boolean) value(name);
    }

    /** A copy with another {@code --stall} value (the full run shows both stalls unless one is asked for). */
    LabOptions withStall(String stall) {
        Map<String, Object> copy = new LinkedHashMap<>(values);
        copy.put("stall", convert(SPECS.get("stall"), stall));
        return new LabOptions(command, copy, given, rest);
    }

    /** True when the option was on the command line (not its default). */
    public boolean given(String name) {
        return given.contains(name);
    }

    private Object value(String name) {
        if (!SPECS.containsKey(name)) {
            throw new IllegalArgumentException("no option --" + name);
        }
        return values.get(name);
    }
}
