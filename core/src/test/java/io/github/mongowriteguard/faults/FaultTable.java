package io.github.mongowriteguard.faults;

import java.util.List;

/** Issue 14's table from fault runs, one block per deployment, the raw driver's row first. */
public final class FaultTable {
    private FaultTable() {}

    public static String of(List<FaultReport> reports) {
        StringBuilder table = new StringBuilder();
        String current = null;
        for (FaultReport report : reports) {
            if (!report.deployment().equals(current)) {
                current = report.deployment();
                table.append('\n')
                        .append(current)
                        .append(", seed ")
                        .append(report.seed())
                        .append(", ")
                        .append(report.operations())
                        .append(" operations per writer\n\n")
                        .append(
                                "| | lost | applied twice | max copies at once | outcome says \"not applied\" (or retry-safe) but"
                                        + " it was applied |\n")
                        .append("|---|---|---|---|---|\n");
            }
            table.append(report.row()).append('\n');
        }
        return table.toString();
    }
}
