package io.github.mongowriteguard.benchmarks.lab;

import java.util.Locale;

/**
 * The soak's report: one self-contained HTML file in the lab report's style (inline SVG, no script), with the
 * growth check's table and one curve per series over the run's minutes, the first and second halves' means drawn
 * across them.
 */
final class SoakReport {
    private static final int WIDTH = 520;
    private static final int HEIGHT = 170;
    private static final int LEFT = 70;
    private static final int BOTTOM = 30;

    private SoakReport() {}

    static String render(FaultSoak.Result result, String commandLine) {
        StringBuilder html = new StringBuilder();
        html.append("<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><title>mongo-write-guard soak"
                        + " report</title>\n")
                .append("<style>body{font-family:sans-serif;max-width:1100px;margin:24px auto;color:#222}")
                .append("table{border-collapse:collapse;margin:8px 0 16px}td,th{border:1px solid #ccc;padding:3px"
                        + " 8px;text-align:right}")
                .append("th{background:#f3f3f3}td:first-child,th:first-child{text-align:left}svg{background:#fff;"
                        + "border:1px solid #ddd;margin:4px}")
                .append(".note{color:#555;font-size:90%}</style></head><body>\n")
                .append("<h1>mongo-write-guard soak report</h1>\n<p class=\"note\">")
                .append(HtmlReport.esc(commandLine))
                .append(" &mdash; on the embedded emulated cluster.</p>\n");
        section(html, result);
        html.append("</body></html>\n");
        return html.toString();
    }

    /** The soak's section: what ran, the check per series, the curves. */
    static void section(StringBuilder html, FaultSoak.Result r) {
        FaultSoak.Settings s = r.settings();
        FaultSoak.Sample last = r.samples().get(r.samples().size() - 1);
        html.append("<h2>Soak under faults: what one instance holds over time</h2>\n<p>")
                .append(HtmlReport.fmt(s.minutes(), 1))
                .append(" minutes; one application instance in its own JVM (")
                .append(HtmlReport.esc(r.instanceJvm()))
                .append(") writing polls of ")
                .append(s.pollSize())
                .append(" events over ")
                .append(s.keys())
                .append(" keys as ordered bulks through the guard (settle first) into 2 replicating shards of 3"
                        + " members (w: majority); a fault every ")
                .append(HtmlReport.fmt(s.faultEverySeconds(), 0))
                .append(" s in turn: ")
                .append(HtmlReport.esc(r.faults().toString()))
                .append(". ")
                .append(String.format(Locale.ROOT, "%,d", last.writes()))
                .append(" writes, ")
                .append(last.settles())
                .append(" settles, ")
                .append(last.deadLettered())
                .append(" dead-lettered. Sampled every ")
                .append(HtmlReport.fmt(s.sampleSeconds(), 0))
                .append(" s. <b>")
                .append(r.flat() ? "Every series is flat." : "Not every series is flat.")
                .append("</b></p>\n");
        html.append("<table id=\"soak\"><tr><th>series</th><th>bound</th><th>1st half mean</th><th>2nd half mean</th>"
                + "<th>1st half max</th><th>2nd half max</th><th>2nd half slope / min</th><th>tolerance</th>"
                + "<th>flat</th></tr>");
        for (FaultSoak.Trend t : r.trends()) {
            Long bound = r.bounds().get(t.series());
            html.append("<tr><td>")
                    .append(HtmlReport.esc(t.series()))
                    .append("</td><td>")
                    .append(bound == null ? "-" : bound < 0 ? "none" : String.valueOf(bound))
                    .append("</td><td>")
                    .append(HtmlReport.fmt(t.firstMean(), 1))
                    .append("</td><td>")
                    .append(HtmlReport.fmt(t.secondMean(), 1))
                    .append("</td><td>")
                    .append(HtmlReport.fmt(t.firstMax(), 0))
                    .append("</td><td>")
                    .append(HtmlReport.fmt(t.secondMax(), 0))
                    .append("</td><td>")
                    .append(HtmlReport.fmt(t.slopePerMinute(), 2))
                    .append("</td><td>")
                    .append(HtmlReport.fmt(t.tolerance(), 1))
                    .append("</td><td>")
                    .append(t.flat() ? "yes" : "<b>no</b>")
                    .append("</td></tr>");
        }
        html.append("</table>\n<p class=\"note\">Flat: the second half's mean within the tolerance of the first"
                + " half's, and the second half's least-squares slope carried over half the run within it too. The"
                + " tolerance is the larger of an absolute floor and a share of the first half's mean (heap: 2 MiB,"
                + " 5 %; threads, sessions and the guard's counts: 2, sessions also 10 %; for every series at least three times its"
                + " first half's sample-to-sample noise). Dashed: each half's mean.</p>\n");
        for (FaultSoak.Trend t : r.trends()) {
            html.append(chart(r, t));
        }
        html.append("\n");
    }

    /** One series over the run's minutes, with each half's mean dashed. */
    static String chart(FaultSoak.Result r, FaultSoak.Trend t) {
        boolean heap = t.series().equals("heapAfterGcBytes");
        double scale = heap ? 1048576.0 : 1;
        String unit = heap ? "heap after GC, MiB" : t.series();
        double maxX = Math.max(1e-9, r.samples().get(r.samples().size() - 1).seconds() / 60);
        double maxY = 0;
        for (FaultSoak.Sample s : r.samples()) {
            maxY = Math.max(maxY, s.values().getOrDefault(t.series(), 0.0) / scale);
        }
        maxY = maxY <= 0 ? 1 : maxY * 1.15;
        double w = WIDTH - LEFT - 10;
        double h = HEIGHT - BOTTOM - 20;
        StringBuilder svg = new StringBuilder();
        svg.append(String.format(
                Locale.ROOT,
                "<svg width=\"%d\" height=\"%d\" role=\"img\" aria-label=\"%s\">",
                WIDTH,
                HEIGHT,
                HtmlReport.esc(unit)));
        svg.append(HtmlReport.text(LEFT, 14, unit + (t.flat() ? " (flat)" : " (GROWS)"), "start"));
        svg.append(HtmlReport.line(LEFT, 20, LEFT, 20 + h, "#999", 1.2, null));
        svg.append(HtmlReport.line(LEFT, 20 + h, LEFT + w, 20 + h, "#999", 1.2, null));
        svg.append(HtmlReport.text(LEFT - 4, 24, HtmlReport.fmt(maxY, heap ? 1 : 0), "end"));
        svg.append(HtmlReport.text(LEFT - 4, 20 + h, "0", "end"));
        svg.append(HtmlReport.text(LEFT + w, HEIGHT - 8, HtmlReport.fmt(maxX, 1) + " min", "end"));
        StringBuilder points = new StringBuilder();
        for (FaultSoak.Sample s : r.samples()) {
            double x = LEFT + w * (s.seconds() / 60) / maxX;
            double y = 20 + h - h * (s.values().getOrDefault(t.series(), 0.0) / scale) / maxY;
            points.append(String.format(Locale.ROOT, "%.1f,%.1f ", x, y));
        }
        svg.append("<polyline fill=\"none\" stroke=\"")
                .append(HtmlReport.COLOURS[2])
                .append("\" stroke-width=\"1.5\" points=\"")
                .append(points.toString().trim())
                .append("\"/>");
        double y1 = 20 + h - h * (t.firstMean() / scale) / maxY;
        double y2 = 20 + h - h * (t.secondMean() / scale) / maxY;
        svg.append(HtmlReport.line(LEFT, y1, LEFT + w / 2, y1, HtmlReport.COLOURS[1], 1.2, "4,3"));
        svg.append(HtmlReport.line(LEFT + w / 2, y2, LEFT + w, y2, HtmlReport.COLOURS[0], 1.2, "4,3"));
        svg.append("</svg>\n");
        return svg.toString();
    }
}
