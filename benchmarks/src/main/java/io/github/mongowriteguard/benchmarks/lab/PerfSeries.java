package io.github.mongowriteguard.benchmarks.lab;

import java.io.PrintStream;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * {@code perf}'s linearity series: for each case (kind and order), the cost per write at each bulk size, guard and
 * driver side by side, and how much it grew from the smallest size of at least {@link #FROM} writes to the largest.
 * Three measures, because the wall time mixes three things: the time per write (client, emulator and GC), the calling
 * thread's CPU time per write (the client's own work: the guard's planning, encoding and reply reading, or the
 * driver's), and the GC time per bulk (a buffer or a list that grows with the bulk shows there first).
 *
 * <p>"Flat" is judged on the calling thread's CPU time: the guard's per-write CPU time at the largest size is at most
 * {@link #FLAT} times its figure at the smallest, or grows no more than the driver's does in the same run (the cache
 * misses of a larger bulk cost both clients alike). The wall time is shown, not judged: the emulator's share of it is
 * the same on both paths.
 */
final class PerfSeries {
    /** The series starts here: below it the fixed cost per call dominates the cost per write. */
    static final int FROM = 1_000;
    /** How much the guard's CPU time per write may grow over the series and still count as flat. */
    static final double FLAT = 1.10;

    private PerfSeries() {}

    /** One case's points, sizes ascending, and its growth from the first point to the last. */
    record Series(String name, List<Perf.Row> points) {
        double driverGrowth() {
            return perWrite(last(), last().driver()) / perWrite(first(), first().driver());
        }

        double guardGrowth() {
            return perWrite(last(), last().guard()) / perWrite(first(), first().guard());
        }

        double driverCpuGrowth() {
            return perWrite(last(), last().driverCpu()) / perWrite(first(), first().driverCpu());
        }

        double guardCpuGrowth() {
            return perWrite(last(), last().guardCpu()) / perWrite(first(), first().guardCpu());
        }

        boolean flat() {
            return guardCpuGrowth() <= FLAT || guardCpuGrowth() <= driverCpuGrowth() * FLAT;
        }

        private Perf.Row first() {
            return points.get(0);
        }

        private Perf.Row last() {
            return points.get(points.size() - 1);
        }
    }

    /** The series of these bulkWrite rows: cases with at least two sizes of {@link #FROM} writes or more. */
    static List<Series> of(List<Perf.Row> writes) {
        Map<String, List<Perf.Row>> byCase = new LinkedHashMap<>();
        for (Perf.Row row : writes) {
            if (row.writes() >= FROM) {
                String name = row.label().substring(row.label().indexOf(' ') + 1);
                byCase.computeIfAbsent(name, n -> new ArrayList<>()).add(row);
            }
        }
        List<Series> series = new ArrayList<>();
        byCase.forEach((name, rows) -> {
            if (rows.size() > 1) {
                rows.sort(Comparator.comparingInt(Perf.Row::writes));
                series.add(new Series(name, List.copyOf(rows)));
            }
        });
        return series;
    }

    static void print(List<Perf.Row> writes, PrintStream out) {
        List<Series> all = of(writes);
        if (all.isEmpty()) {
            return;
        }
        out.printf(
                "%n4. the series: cost per write by bulk size, guard and driver; us/w: median time per write; CPU us/w: the"
                        + " calling thread's CPU time per write (the client's own work); GC ms: the JVM's GC time per bulk"
                        + "%n   flat: the guard's CPU time per write grows at most %.2fx from the first size to the last,"
                        + " or no more than %.2fx the driver's growth%n",
                FLAT, FLAT);
        out.printf(
                "%-26s %8s %9s %9s %7s %9s %9s %7s %8s %8s%n",
                "case", "writes", "driver us", "guard us", "ratio", "drv CPU", "grd CPU", "ratio", "drv GC", "grd GC");
        for (Series s : all) {
            for (Perf.Row r : s.points()) {
                out.printf(
                        "%-26s %8d %9.2f %9.2f %7.3f %9.2f %9.2f %7.3f %8.1f %8.1f%n",
                        s.name(),
                        r.writes(),
                        perWrite(r, r.driver()),
                        perWrite(r, r.guard()),
                        r.ratio(),
                        perWrite(r, r.driverCpu()),
                        perWrite(r, r.guardCpu()),
                        r.cpuRatio(),
                        r.driverGc(),
                        r.guardGc());
            }
            out.printf(
                    "%-26s %8s %9.2fx %8.2fx %7s %8.2fx %8.2fx %7s %s%n",
                    s.name(),
                    "growth",
                    s.driverGrowth(),
                    s.guardGrowth(),
                    "",
                    s.driverCpuGrowth(),
                    s.guardCpuGrowth(),
                    "",
                    s.flat() ? "flat" : "NOT flat");
        }
    }

    /** The series as JSON: each case's points in microseconds per write, its growth, and whether it is flat. */
    static List<Object> toJson(List<Perf.Row> writes) {
        List<Object> json = new ArrayList<>();
        for (Series s : of(writes)) {
            Map<String, Object> one = new LinkedHashMap<>();
            one.put("case", s.name());
            List<Object> points = new ArrayList<>();
            for (Perf.Row r : s.points()) {
                Map<String, Object> point = new LinkedHashMap<>();
                point.put("writes", r.writes());
                point.put("driverMicrosPerWrite", perWrite(r, r.driver()));
                point.put("guardMicrosPerWrite", perWrite(r, r.guard()));
                point.put("driverCpuMicrosPerWrite", perWrite(r, r.driverCpu()));
                point.put("guardCpuMicrosPerWrite", perWrite(r, r.guardCpu()));
                point.put("driverBytesPerWrite", r.driverAlloc() / r.writes());
                point.put("guardBytesPerWrite", r.guardAlloc() / r.writes());
                point.put("driverGcMillis", r.driverGc());
                point.put("guardGcMillis", r.guardGc());
                points.add(point);
            }
            one.put("points", points);
            one.put("driverGrowth", s.driverGrowth());
            one.put("guardGrowth", s.guardGrowth());
            one.put("driverCpuGrowth", s.driverCpuGrowth());
            one.put("guardCpuGrowth", s.guardCpuGrowth());
            one.put("flat", s.flat());
            json.add(one);
        }
        return json;
    }

    /** Milliseconds per bulk as microseconds per write. */
    private static double perWrite(Perf.Row row, double millis) {
        return millis * 1000 / row.writes();
    }
}
