package io.github.mongowriteguard.faults;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * The Jepsen-style fault suite of issue 14, bounded for {@code mvn verify}: on the replica set (3 members) and on the
 * sharded cluster (3 shards of 3 replicating members, {@code -Dfaults.shards=N}), failover, restarts and partitions
 * included on both, the raw driver with a 3-attempt application loop and
 * the guard run the same seeded workload under the same kinds of faults; the table shows both, the guard's row must
 * read 0 / 0 / 1 / 0. Longer runs: {@code -Dfaults.operations=1500} (per client); replay one: {@code -Dfaults.seed=...}.
 */
class FaultSuiteTest {

    private static List<FaultReport> runBoth(Topology topology) {
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

    /** {@code -Dfaults.writers=guarded} (or {@code raw}) runs one writer only, e.g. to replay a seed. */
    private static List<Writer.Kind> writers() {
        String only = System.getProperty("faults.writers", "raw,guarded");
        return java.util.Arrays.stream(only.split(","))
                .map(String::trim)
                .map(w -> Writer.Kind.valueOf(w.toUpperCase(java.util.Locale.ROOT)))
                .toList();
    }

    private static FaultReport guarded(List<FaultReport> reports) {
        return reports.stream()
                .filter(r -> r.writer() == Writer.Kind.GUARDED)
                .findFirst()
                .orElse(null);
    }

    @Test
    void replicaSet_guardedRowReadsZeroZeroOneZero() {
        FaultReport guarded = guarded(runBoth(Topology.REPLICA_SET));
        org.junit.jupiter.api.Assumptions.assumeTrue(guarded != null, "the guarded writer did not run");
        assertThat(guarded.violations())
                .as("guard violations, seed " + guarded.seed())
                .isEmpty();
        assertThat(guarded.clean()).isTrue();
    }

    @Test
    void sharded_guardedRowReadsZeroZeroOneZero() {
        FaultReport guarded = guarded(runBoth(Topology.SHARDED));
        org.junit.jupiter.api.Assumptions.assumeTrue(guarded != null, "the guarded writer did not run");
        assertThat(guarded.violations())
                .as("guard violations, seed " + guarded.seed())
                .isEmpty();
        assertThat(guarded.clean()).isTrue();
    }
}
