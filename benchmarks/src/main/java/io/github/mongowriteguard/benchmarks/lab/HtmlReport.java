package io.github.mongowriteguard.benchmarks.lab;

import java.util.ArrayList;
import java.util.List;
import java.util.Locale;

/**
 * The lab's report: one self-contained HTML file (inline SVG and CSS, no script, nothing fetched) with a chart of
 * round trips against shard count, the latency table as bars, and the retry timeline as copies running over time.
 */
final class HtmlReport {
    static final String[] COLOURS = {"#d62728", "#ff7f0e", "#1f77b4", "#2ca02c", "#9467bd", "#8c564b"};

    private HtmlReport() {}

    /** The report for whatever scenarios ran; a scenario that did not run is left out. */
    static String render(Lab.Results results, String commandLine) {
        return render(
                results.roundTrips(),
                results.latency(),
                results.retries(),
                results.overhead(),
                results.staleReads(),
                results.hotKeys(),
                results.scale(),
                results.connect(),
                commandLine);
    }

    /** The report for whatever scenarios ran; a null result is left out. */
    static String render(
            RoundTrips.Result roundTrips,
            Latency.Result latency,
            Retries.Result retries,
            Overhead.Result overhead,
            StaleReads.Result staleReads,
            String commandLine) {
        return render(roundTrips, latency, retries, overhead, staleReads, null, null, null, commandLine);
    }

    /** The report for whatever scenarios ran; a null result is left out. */
    static String render(
            RoundTrips.Result roundTrips,
            Latency.Result latency,
            Retries.Result retries,
            Overhead.Result overhead,
            StaleReads.Result staleReads,
            HotKeys.Result hotKeys,
            Scale.Result scale,
            ConnectSinks.Result connect,
            String commandLine) {
        StringBuilder html = new StringBuilder();
        html.append(
                        "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><title>mongo-write-guard lab report</title>\n")
                .append("<style>body{font-family:sans-serif;max-width:1100px;margin:24px auto;color:#222}")
                .append(
                        "table{border-collapse:collapse;margin:8px 0 16px}td,th{border:1px solid #ccc;padding:3px 8px;text-align:right}")
                .append(
                        "th{background:#f3f3f3}td:first-child,th:first-child,td.text{text-align:left}svg{background:#fff;border:1px solid #ddd}")
                .append(".note{color:#555;font-size:90%}</style></head><body>\n")
                .append("<h1>mongo-write-guard lab report</h1>\n<p class=\"note\">")
                .append(esc(commandLine))
                .append(
                        " &mdash; on the embedded emulated cluster unless a note says otherwise. Facts: write-path.md.</p>\n");
        if (roundTrips != null) {
            roundTripsSection(html, roundTrips);
        }
        if (latency != null) {
            latencySection(html, latency);
        }
        if (retries != null) {
            retriesSection(html, retries);
        }
        if (overhead != null) {
            html.append("<h2>Overhead on one replica set</h2>\n<table><tr><th>client</th><th>median ms</th></tr>");
            overhead.medianMillis()
                    .forEach((client, millis) -> html.append("<tr><td>")
                            .append(esc(client))
                            .append("</td><td>")
                            .append(fmt(millis, 2))
                            .append("</td></tr>"));
            html.append("</table><p>guarded / driver = <b>")
                    .append(fmt(overhead.ratio(), 2))
                    .append("</b> (")
                    .append(overhead.docs())
                    .append(" upserts per bulk, ")
                    .append(overhead.runs())
                    .append(" interleaved runs)</p>\n");
        }
        if (staleReads != null) {
            staleReadsSection(html, staleReads);
        }
        if (hotKeys != null) {
            hotKeysSection(html, hotKeys);
        }
        if (scale != null) {
            scaleSection(html, scale);
        }
        if (connect != null) {
            connectSection(html, connect);
        }
        html.append("</body></html>\n");
        return html.toString();
    }

    private static void connectSection(StringBuilder html, ConnectSinks.Result r) {
        ConnectSinks.Settings s = r.settings();
        html.append("<h2>Kafka Connect: the official sink and the guarded sink on one topic</h2>\n<p>")
                .append(String.format(
                        Locale.ROOT,
                        "%,d records ($inc upserts over %,d keys, %d partitions) through a 2-worker Connect cluster into"
                                + " %d hashed shards, each sink into its own database, one after the other; the next %d"
                                + " update replies at mongos lost as each sink starts.",
                        s.records(),
                        s.keys(),
                        ConnectSinks.PARTITIONS,
                        ConnectSinks.SHARDS,
                        s.lostReplies()))
                .append("</p>\n<table id=\"connect\"><tr><th>sink</th><th>round trips</th><th>records/s</th>")
                .append("<th>server copies</th><th>lost</th><th>applied twice</th><th>dead-lettered</th>")
                .append("<th>applied and dead-lettered</th></tr>");
        for (ConnectSinks.Row row : r.rows()) {
            html.append("<tr><td>")
                    .append(esc(row.sink()))
                    .append("</td><td>")
                    .append(row.roundTrips())
                    .append("</td><td>")
                    .append(fmt(row.recordsPerSecond(), 0))
                    .append("</td><td>")
                    .append(row.serverCopies())
                    .append("</td><td>")
                    .append(row.lost())
                    .append("</td><td>")
                    .append(row.appliedTwice())
                    .append("</td><td>")
                    .append(row.deadLettered())
                    .append("</td><td>")
                    .append(row.appliedDeadLettered())
                    .append("</td></tr>");
        }
        html.append(
                "</table><p class=\"note\">Round trips: mongos-to-shard child batches of the sink's collection."
                        + " Server copies: distinct (lsid, txnNumber) the shards ran. Records/s: from the connector's start to"
                        + " every offset committed (a shared machine: compare the rows of one run). docs/kafka-connect.md.</p>\n");
    }

    private static void scaleSection(StringBuilder html, Scale.Result r) {
        html.append("<h2>Scale: what a fleet of instances costs the cluster</h2>\n<p>Per application instance (its own"
                        + " client, guard and catalog): what it sends through mongos to the config servers, as commands /"
                        + " documents / KiB; per ordered bulk of ")
                .append(Scale.EVENTS)
                .append(" events over ")
                .append(Scale.KEYS)
                .append(
                        " keys: the guard's rounds and commands, the child batches mongos sent (its round trips) against"
                                + " the driver's ORDERED bulk; the shards one overlap-gate look asks; heap per instance.</p>\n");
        html.append("<table id=\"scale\"><tr><th>shards</th><th>chunks</th><th>instances</th><th>mongos</th>"
                + "<th>first read</th><th>quiet minute</th><th>minute after a migration</th>"
                + "<th>rounds</th><th>commands</th><th>guard batches</th><th>driver batches</th><th>gate fan-out</th>"
                + "<th>heap guard KiB</th><th>heap driver KiB</th><th>catalog B/chunk</th></tr>");
        for (Scale.Point p : r.points()) {
            html.append("<tr><td>")
                    .append(p.shards())
                    .append("</td><td>")
                    .append(p.chunks())
                    .append("</td><td>")
                    .append(p.instances())
                    .append("</td><td>")
                    .append(p.mongos())
                    .append("</td><td>")
                    .append(load(p.firstRead()))
                    .append("</td><td>")
                    .append(load(p.quietMinute()))
                    .append("</td><td>")
                    .append(load(p.migrationMinute()))
                    .append("</td><td>")
                    .append(fmt(p.guardRounds(), 1))
                    .append("</td><td>")
                    .append(fmt(p.guardCommands(), 1))
                    .append("</td><td>")
                    .append(fmt(p.guardChildBatches(), 1))
                    .append("</td><td>")
                    .append(fmt(p.driverChildBatches(), 1))
                    .append("</td><td>")
                    .append(p.gateFanOut())
                    .append("</td><td>")
                    .append(p.guardHeapPerInstance() / 1024)
                    .append("</td><td>")
                    .append(p.driverHeapPerInstance() / 1024)
                    .append("</td><td>")
                    .append(fmt(p.catalogBytesPerChunk(), 0))
                    .append("</td></tr>");
        }
        html.append("</table>\n<p class=\"note\">The raw driver sends nothing to the config servers. Before the chunks"
                + " were read by collection version, each instance read up to 20,001 chunks every minute per"
                + " collection. The model for a larger fleet is in docs/lab.md (Scale).</p>\n");
        html.append(
                "<p>Under faults, per instance: the N guarded instances at once, then N raw driver clients, each one"
                        + " ORDERED bulk of the events and one updateMany (through the guard with idempotent multi-document"
                        + " retries) while the fault holds.</p>\n<table id=\"scale-faults\"><tr><th>shards</th><th>chunks</th>"
                        + "<th>phase</th><th>guard s</th><th>commands</th><th>UNKNOWN</th><th>UNKNOWN after a settle</th>"
                        + "<th>updateMany refused</th><th>gate currentOp</th><th>gate killSessions</th>"
                        + "<th>shards asked (currentOp)</th><th>catalog commands</th><th>driver s</th>"
                        + "<th>driver calls failed</th></tr>");
        for (Scale.Point p : r.points()) {
            for (Scale.FaultPhase f : p.faults()) {
                html.append("<tr><td>")
                        .append(p.shards())
                        .append("</td><td>")
                        .append(p.chunks())
                        .append("</td><td class=\"text\">")
                        .append(esc(f.phase()))
                        .append("</td>");
                for (double v : f.values()) {
                    html.append("<td>").append(fmt(v, 1)).append("</td>");
                }
                html.append("</tr>");
            }
        }
        html.append("</table>\n<p class=\"note\">The gate asks <code>currentOp</code> only before a new copy of a"
                + " write without a retryable-write identity (a multi-document write the caller opted in to retry);"
                + " a retryable write is resent as the same copy without it. Through mongos each look asks every"
                + " shard's primary.</p>\n");
    }

    private static String load(Scale.Load load) {
        return fmt(load.commands(), 0) + " / " + fmt(load.documents(), 0) + " / " + fmt(load.bytes() / 1024, 1);
    }

    private static void hotKeysSection(StringBuilder html, HotKeys.Result r) {
        html.append("<h2>Hot keys: bulks that repeat a key</h2>\n<p>")
                .append(r.counterWrites())
                .append(" <code>$inc</code> on one <code>_id</code> (ORDERED, replica set); ")
                .append(r.events())
                .append(" replacement events over ")
                .append(r.keys())
                .append(
                        " keys (ORDERED; <code>events-rs</code> on a replica set, <code>events</code> sharded <code>{_id: \"hashed\"}</code>, ")
                .append(r.shards())
                .append(" shards). Median of ")
                .append(r.runs())
                .append(" interleaved runs.</p>\n");
        html.append("<table id=\"hot-keys\"><tr><th>workload</th><th>client</th><th>writes</th><th>rounds</th>"
                + "<th>commands</th><th>mongos rounds</th><th>child batches</th><th>median ms</th></tr>");
        for (HotKeys.Row row : r.rows()) {
            html.append("<tr><td>")
                    .append(esc(row.workload()))
                    .append("</td><td class=\"text\">")
                    .append(esc(row.client()))
                    .append("</td><td>")
                    .append(row.writes())
                    .append("</td><td>")
                    .append(dash(row.rounds()))
                    .append("</td><td>")
                    .append(row.commands())
                    .append("</td><td>")
                    .append(dash(row.mongosRounds()))
                    .append("</td><td>")
                    .append(dash(row.childBatches()))
                    .append("</td><td>")
                    .append(fmt(row.medianMillis(), 1))
                    .append("</td></tr>");
        }
        html.append("</table>\n<p class=\"note\">guard (compaction): <code>lastWriteWins</code>, superseded"
                + " replacements are not sent (their outcome is SUPERSEDED); driver UNORDERED (deduplicated): the"
                + " articles' last value per <code>_id</code>, computed by the caller.</p>\n");
    }

    private static void roundTripsSection(StringBuilder html, RoundTrips.Result r) {
        html.append("<h2>Mongos-to-shard round trips of one bulk</h2>\n<p>")
                .append(r.docs())
                .append(
                        " ReplaceOne upserts keyed by <code>_id: {productId, storeId}</code>, collection sharded <code>{_id: \"hashed\"}</code>, ")
                .append(r.shards())
                .append(" shards. Formula 1+(n-1)(1-1/S) = ")
                .append(fmt(r.formula(), 1))
                .append(".</p>\n");
        html.append("<table><tr><th>client</th><th>round trips</th><th>rounds</th><th>wall ms</th></tr>");
        for (RoundTrips.Row row : r.rows()) {
            html.append("<tr><td>")
                    .append(esc(row.client()))
                    .append("</td><td>")
                    .append(dash(row.roundTrips()))
                    .append("</td><td>")
                    .append(dash(row.rounds()))
                    .append("</td><td>")
                    .append(fmt(row.millis(), 1))
                    .append("</td></tr>");
        }
        html.append("</table>\n<p>wall ms: one bulk per client, no latency model, on a JIT still warming up; the next"
                + " section measures time.</p>\n");
        if (!r.sweep().isEmpty()) {
            html.append(roundTripChart(r)).append('\n');
        }
        note(html, r.note());
    }

    /** Line chart: round trips against shard count, one line per client, the formula dashed. */
    static String roundTripChart(RoundTrips.Result r) {
        int w = 760;
        int h = 380;
        int left = 60;
        int right = 170;
        int top = 30;
        int bottom = 50;
        double xMin = r.sweep().get(0).shards();
        double xMax = r.sweep().get(r.sweep().size() - 1).shards();
        double yMax = niceCeiling(r.docs());
        StringBuilder svg = new StringBuilder();
        svg.append(String.format(
                Locale.ROOT,
                "<svg id=\"chart-roundtrips\" xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" height=\"%d\" viewBox=\"0 0 %d %d\">",
                w,
                h,
                w,
                h));
        svg.append(text(w / 2.0 - 150, 18, "Round trips of one " + r.docs() + "-write bulk vs shards", "bold"));
        double plotW = w - left - right;
        double plotH = h - top - bottom;
        java.util.function.DoubleUnaryOperator x = s -> left + (xMax == xMin ? 0 : (s - xMin) / (xMax - xMin) * plotW);
        java.util.function.DoubleUnaryOperator y = v -> top + plotH - v / yMax * plotH;
        for (int i = 0; i <= 5; i++) {
            double v = yMax * i / 5;
            svg.append(line(left, y.applyAsDouble(v), left + plotW, y.applyAsDouble(v), "#eee", 1, null));
            svg.append(text(left - 8, y.applyAsDouble(v) + 4, fmt(v, 0), "end"));
        }
        for (RoundTrips.SweepPoint p : r.sweep()) {
            svg.append(text(x.applyAsDouble(p.shards()), top + plotH + 18, String.valueOf(p.shards()), "middle"));
        }
        svg.append(text(left + plotW / 2, h - 10, "shards (S)", "middle"));
        svg.append(line(left, top, left, top + plotH, "#444", 1, null))
                .append(line(left, top + plotH, left + plotW, top + plotH, "#444", 1, null));
        List<String> series = new ArrayList<>();
        series.add("formula");
        series.addAll(RoundTrips.SWEEP_CLIENTS);
        for (int si = 0; si < series.size(); si++) {
            String name = series.get(si);
            String colour = name.equals("formula") ? "#000" : COLOURS[si % COLOURS.length];
            StringBuilder points = new StringBuilder();
            for (RoundTrips.SweepPoint p : r.sweep()) {
                Integer measured = p.roundTrips().get(name);
                double v = name.equals("formula") ? p.formula() : measured == null ? Double.NaN : measured;
                if (Double.isNaN(v)) {
                    continue;
                }
                double px = x.applyAsDouble(p.shards());
                double py = y.applyAsDouble(v);
                points.append(String.format(Locale.ROOT, "%.1f,%.1f ", px, py));
                svg.append(String.format(
                        Locale.ROOT,
                        "<circle cx=\"%.1f\" cy=\"%.1f\" r=\"3\" fill=\"%s\"><title>%s S=%d: %s</title></circle>",
                        px,
                        py,
                        colour,
                        esc(name),
                        p.shards(),
                        fmt(v, 1)));
                if (name.equals("guarded")) {
                    svg.append(text(px + 6, py - 8, fmt(v, 0), "start"));
                }
            }
            // driver-ordered is drawn wide and Spring's ORDERED thin on top of it: they coincide when both cost the
            // same.
            double width = name.equals("driver-ordered") ? 6 : 2;
            svg.append(String.format(
                    Locale.ROOT,
                    "<polyline class=\"series-%s\" points=\"%s\" fill=\"none\" stroke=\"%s\" stroke-width=\"%.0f\"%s/>",
                    esc(name),
                    points.toString().trim(),
                    colour,
                    width,
                    name.equals("formula") ? " stroke-dasharray=\"6,4\"" : ""));
            double ly = top + 20 + si * 20;
            svg.append(line(
                    left + plotW + 15,
                    ly,
                    left + plotW + 40,
                    ly,
                    colour,
                    width,
                    name.equals("formula") ? "6,4" : null));
            svg.append(text(left + plotW + 46, ly + 4, name.equals("formula") ? "1+(n-1)(1-1/S)" : name, "start"));
        }
        return svg.append("</svg>").toString();
    }

    private static void latencySection(StringBuilder html, Latency.Result r) {
        html.append("<h2>Wall time per bulk and bulks in flight (Little's law)</h2>\n<p>")
                .append(r.docs())
                .append(" upserts over ")
                .append(r.shards())
                .append(" shards, ")
                .append(fmt(r.rttMs(), 2))
                .append(" ms per round trip, ")
                .append(fmt(r.perDocMs(), 2))
                .append(" ms per document, one shard ")
                .append(Latency.trim(r.slowFactor()))
                .append("x slower, ")
                .append(Latency.trim(r.arrivalPerSecond()))
                .append(" bulks/s arriving; median of ")
                .append(r.repetitions())
                .append(" runs.</p>\n");
        html.append(
                "<table><tr><th>client</th><th>shard</th><th>measured ms</th><th>in flight</th><th>article ms</th><th>article in flight</th><th>slowest-shard bound ms</th></tr>");
        for (Latency.Row row : r.rows()) {
            html.append("<tr><td>")
                    .append(esc(row.client()))
                    .append("</td><td>")
                    .append(esc(row.shard()))
                    .append("</td><td>")
                    .append(fmt(row.millis(), 1))
                    .append("</td><td>")
                    .append(fmt(row.inFlight(), 2))
                    .append("</td><td>")
                    .append(fmt(row.articleMillis(), 1))
                    .append("</td><td>")
                    .append(fmt(Formula.inFlight(r.arrivalPerSecond(), row.articleMillis()), 2))
                    .append("</td><td>")
                    .append(Double.isNaN(row.boundMillis()) ? "-" : fmt(row.boundMillis(), 1))
                    .append("</td></tr>");
        }
        html.append("</table>\n").append(latencyChart(r)).append('\n');
        note(html, r.note());
    }

    /** Horizontal bars: measured median (solid) and the article's value (outlined) per client and shard state. */
    static String latencyChart(Latency.Result r) {
        int w = 900;
        int rowH = 46;
        int left = 190;
        int top = 40;
        int h = top + r.rows().size() * rowH + 40;
        double max = 1;
        for (Latency.Row row : r.rows()) {
            max = Math.max(max, Math.max(row.millis(), row.articleMillis()));
        }
        double plotW = w - left - 240;
        StringBuilder svg = new StringBuilder(String.format(
                Locale.ROOT,
                "<svg id=\"chart-latency\" xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" height=\"%d\" viewBox=\"0 0 %d %d\">",
                w,
                h,
                w,
                h));
        svg.append(text(left, 20, "Wall time per bulk (ms): measured median (solid) vs article (outline)", "bold"));
        for (int i = 0; i < r.rows().size(); i++) {
            Latency.Row row = r.rows().get(i);
            double y = top + i * rowH;
            String colour = row.client().equals("guarded") ? COLOURS[3] : COLOURS[1];
            svg.append(text(left - 8, y + 18, row.client() + ", " + row.shard() + " shard", "end"));
            double mw = Math.max(1, row.millis() / max * plotW);
            double aw = Math.max(1, row.articleMillis() / max * plotW);
            svg.append(String.format(
                    Locale.ROOT,
                    "<rect class=\"bar-measured\" x=\"%d\" y=\"%.1f\" width=\"%.1f\" height=\"16\" fill=\"%s\"/>",
                    left,
                    y + 4,
                    mw,
                    colour));
            svg.append(text(
                    left + mw + 6,
                    y + 17,
                    fmt(row.millis(), 1) + " ms, " + fmt(row.inFlight(), 1) + " in flight",
                    "start"));
            svg.append(String.format(
                    Locale.ROOT,
                    "<rect class=\"bar-article\" x=\"%d\" y=\"%.1f\" width=\"%.1f\" height=\"12\" fill=\"none\" stroke=\"%s\" stroke-width=\"1.5\"/>",
                    left,
                    y + 23,
                    aw,
                    colour));
            svg.append(text(left + aw + 6, y + 33, "article " + fmt(row.articleMillis(), 0) + " ms", "start"));
        }
        return svg.append("</svg>").toString();
    }

    private static void staleReadsSection(StringBuilder html, StaleReads.Result r) {
        html.append(
                        "<h2 id=\"stale-reads\">Reads on a shard whose primary cannot write</h2>\n<p>2 shards x 3 nodes, 2,000 documents;"
                                + " refresh limit ")
                .append(r.refreshLimitMs())
                .append(" ms (30 s scaled), client maxTimeMS ")
                .append(r.maxTimeMs())
                .append(" ms.</p>\n");
        if (!r.rows().isEmpty()) {
            html.append(
                    "<table><tr><th>step</th><th>read aimed at</th><th>outcome</th><th>ms</th><th>detail</th></tr>");
            for (StaleReads.Row row : r.rows()) {
                html.append("<tr><td>")
                        .append(esc(row.step()))
                        .append("</td><td class=\"text\">")
                        .append(esc(row.node()))
                        .append("</td><td class=\"text\">")
                        .append(esc(row.outcome()))
                        .append("</td><td>")
                        .append(row.millis())
                        .append("</td><td class=\"text\">")
                        .append(esc(row.detail()))
                        .append("</td></tr>");
            }
            html.append("</table>\n");
        }
        if (r.note() != null) {
            html.append("<p class=\"note\">").append(esc(r.note())).append("</p>\n");
        }
    }

    private static void retriesSection(StringBuilder html, Retries.Result r) {
        html.append("<h2>Application retries: copies running on the server over time</h2>\n<p>")
                .append(r.appAttempts())
                .append(" application attempts of an insert without <code>_id</code>, socket timeout ")
                .append(r.socketTimeoutMs())
                .append(
                        " ms, inserts held by a stall longer than the run and then released. Counted by the server (lsid, txnNumber).</p>\n");
        html.append(
                "<table><tr><th>client</th><th>stall</th><th>retryWrites</th><th>sends</th><th>copies</th><th>max at once</th><th>documents</th><th>application saw</th></tr>");
        for (Retries.Row row : r.rows()) {
            html.append("<tr><td>")
                    .append(esc(row.client()))
                    .append("</td><td>")
                    .append(esc(row.stall()))
                    .append("</td><td>")
                    .append(row.retryWrites())
                    .append("</td><td>")
                    .append(row.sends())
                    .append("</td><td>")
                    .append(row.copies())
                    .append("</td><td>")
                    .append(row.maxConcurrentCopies())
                    .append("</td><td>")
                    .append(row.documents())
                    .append("</td><td class=\"text\">")
                    .append(esc(row.applicationSaw()))
                    .append("</td></tr>");
        }
        html.append("</table>\n");
        if (!r.rows().isEmpty()) {
            html.append(retryTimelineChart(r)).append('\n');
        }
        note(html, r.note());
    }

    /** One step chart per run: how many copies of the record were running on the server at each moment. */
    static String retryTimelineChart(Retries.Result r) {
        int w = 900;
        int panelH = 70;
        int left = 260;
        int top = 30;
        int h = top + r.rows().size() * (panelH + 24) + 30;
        double end = 1;
        int maxCopies = 1;
        for (Retries.Row row : r.rows()) {
            for (double[] t : row.timeline()) {
                end = Math.max(end, t[1]);
            }
            maxCopies = Math.max(maxCopies, row.maxConcurrentCopies());
        }
        double plotW = w - left - 30;
        StringBuilder svg = new StringBuilder(String.format(
                Locale.ROOT,
                "<svg id=\"chart-retries\" xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" height=\"%d\" viewBox=\"0 0 %d %d\">",
                w,
                h,
                w,
                h));
        svg.append(text(
                20,
                18,
                "Copies of the record running on the server (y, 0-" + maxCopies + ") over time (x, ms from the"
                        + " first attempt); the stall is released when the application gives up",
                "bold"));
        for (int i = 0; i < r.rows().size(); i++) {
            Retries.Row row = r.rows().get(i);
            double y0 = top + i * (panelH + 24);
            double base = y0 + panelH;
            String colour = row.client().equals("guarded") ? COLOURS[3] : COLOURS[0];
            svg.append(text(left - 8, y0 + 28, row.client() + ", retryWrites " + row.retryWrites(), "end"));
            svg.append(text(left - 8, y0 + 44, row.stall() + " stall: " + row.documents() + " docs", "end"));
            svg.append(line(left, base, left + plotW, base, "#444", 1, null));
            svg.append(line(left, y0, left, base, "#444", 1, null));
            for (int c = 1; c <= maxCopies; c++) {
                double gy = base - (double) c / maxCopies * (panelH - 6);
                svg.append(line(left, gy, left + plotW, gy, "#eee", 1, null));
            }
            StringBuilder points = new StringBuilder(String.format(Locale.ROOT, "%.1f,%.1f ", (double) left, base));
            int running = 0;
            for (double[] step : steps(row.timeline())) {
                double px = left + step[0] / end * plotW;
                points.append(String.format(
                        Locale.ROOT, "%.1f,%.1f ", px, base - (double) running / maxCopies * (panelH - 6)));
                running = (int) step[1];
                points.append(String.format(
                        Locale.ROOT, "%.1f,%.1f ", px, base - (double) running / maxCopies * (panelH - 6)));
            }
            points.append(String.format(
                    Locale.ROOT, "%.1f,%.1f", left + plotW, base - (double) running / maxCopies * (panelH - 6)));
            svg.append(String.format(
                    Locale.ROOT,
                    "<polyline class=\"timeline\" points=\"%s\" fill=\"%s\" fill-opacity=\"0.25\" stroke=\"%s\" stroke-width=\"2\"/>",
                    points,
                    colour,
                    colour));
            for (int tick = 0; tick <= 4; tick++) {
                double ms = end * tick / 4;
                svg.append(text(left + ms / end * plotW, base + 12, fmt(ms, 0), tick == 4 ? "end" : "middle"));
            }
            svg.append(text(
                    left - 8,
                    y0 + 60,
                    "max " + row.maxConcurrentCopies() + " at once, " + row.copies() + " copies",
                    "end"));
        }
        return svg.append("</svg>").toString();
    }

    /** The copy intervals as (time, copies running from then on), in time order; ends before starts at one instant. */
    static List<double[]> steps(List<double[]> intervals) {
        List<double[]> events = new ArrayList<>();
        for (double[] t : intervals) {
            events.add(new double[] {t[0], 1});
            events.add(new double[] {t[1], -1});
        }
        events.sort((a, b) -> a[0] != b[0] ? Double.compare(a[0], b[0]) : Double.compare(a[1], b[1]));
        List<double[]> steps = new ArrayList<>();
        int running = 0;
        for (double[] e : events) {
            running += (int) e[1];
            steps.add(new double[] {e[0], running});
        }
        return steps;
    }

    private static double niceCeiling(double v) {
        double magnitude = Math.pow(10, Math.floor(Math.log10(Math.max(1, v))));
        for (double m : new double[] {1, 2, 2.5, 5, 10}) {
            if (m * magnitude >= v) {
                return m * magnitude;
            }
        }
        return 10 * magnitude;
    }

    private static void note(StringBuilder html, String note) {
        if (note != null) {
            html.append("<p class=\"note\">").append(esc(note)).append("</p>\n");
        }
    }

    static String line(double x1, double y1, double x2, double y2, String colour, double width, String dash) {
        return String.format(
                Locale.ROOT,
                "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"%s\" stroke-width=\"%.1f\"%s/>",
                x1,
                y1,
                x2,
                y2,
                colour,
                width,
                dash == null ? "" : " stroke-dasharray=\"" + dash + "\"");
    }

    static String text(double x, double y, String s, String anchor) {
        String weight = "";
        if (anchor.equals("bold")) {
            anchor = "start";
            weight = " font-weight=\"bold\"";
        }
        return String.format(
                Locale.ROOT,
                "<text x=\"%.1f\" y=\"%.1f\" font-size=\"12\" text-anchor=\"%s\"%s>%s</text>",
                x,
                y,
                anchor,
                weight,
                esc(s));
    }

    private static String dash(Integer v) {
        return v == null ? "-" : v.toString();
    }

    static String fmt(double v, int decimals) {
        return Double.isNaN(v) ? "-" : String.format(Locale.ROOT, "%." + decimals + "f", v);
    }

    static String esc(String s) {
        return s.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;").replace("\"", "&quot;");
    }
}
