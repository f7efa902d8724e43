package io.github.mongowriteguard.faults;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * The Jepsen-style fault suite of issue 14, bounded for {@code mvn verify}: on the replica set (3 members) and on the
 * sharded cluster (3 shards of 3 replicating members, {@code -Dfaults.shards=N}), failover, restarts and partitions
 * included on both, the raw driver with a 3-attempt application loop, the synchronous guard and the reactive guard
 * ({@code GuardedReactiveCollection} on the Reactive Streams driver) run the same seeded workload under the same kinds
 * of faults (every schedule: each writer gets the whole run); the table shows all three, each guard's row must read
 * 0 / 0 / 1 / 0. Longer runs: {@code -Dfaults.operations=1500} (per client); replay one: {@code -Dfaults.seed=...}.
 */
class FaultSuiteTest {

    private static List<FaultReport> runAll(Topology topology) {
        FaultConfig config = FaultConfig.fromSystemProperties(topology);
        System.out.println("fault suite on " + config.deployment() + ": seed " + config.seed()
                + " (replay with -Dfaults.seed=" + config.seed() + "), " + config.clients() + " clients x "
                + config.operationsPerClient() + " operations");
        List<FaultReport> reports = new ArrayList<>();
        for (Writer.Kind kind : writers()) {
            FaultReport report = FaultRun.run(config, kind);
            System.out.println(report.describe(25));
            reports.add(report);
        }
        System.out.println(FaultTable.of(reports));
        return reports;
    }

    /**
     * {@code -Dfaults.writers=guarded} (or {@code raw}, {@code reactive}, or a list) runs only those writers, e.g. to
     * replay a seed.
     */
    private static List<Writer.Kind> writers() {
        String only = System.getProperty("faults.writers", "raw,guarded,reactive");
        return java.util.Arrays.stream(only.split(","))
                .map(String::trim)
                .map(w -> Writer.Kind.valueOf(w.toUpperCase(java.util.Locale.ROOT)))
                .toList();
    }

    /** The rows of the guard's clients: the synchronous guard and the reactive one. */
    private static List<FaultReport> guardedRows(List<FaultReport> reports) {
        return reports.stream().filter(r -> r.writer() != Writer.Kind.RAW).toList();
    }

    /** Each guard client's row (the synchronous and the reactive guard, on the same schedule) reads 0 / 0 / 1 / 0. */
    @ParameterizedTest
    @EnumSource(Topology.class)
    void guardedRowsReadZeroZeroOneZero(Topology topology) {
        List<FaultReport> guarded = guardedRows(runAll(topology));
        org.junit.jupiter.api.Assumptions.assumeFalse(guarded.isEmpty(), "no guarded writer ran");
        for (FaultReport row : guarded) {
            assertThat(row.violations())
                    .as(row.writer().label() + " violations, seed " + row.seed())
                    .isEmpty();
            assertThat(row.clean())
                    .as(row.writer().label() + " row, seed " + row.seed())
                    .isTrue();
        }
    }
}
