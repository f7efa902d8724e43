package io.github.mongowriteguard.benchmarks.lab;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.Arrays;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.condition.EnabledIfSystemProperty;

/**
 * The scale scenario at small shapes: after the first read, what an instance sends to the config servers does not grow
 * with the number of chunks (two commands, one document, when nothing moved), the first read brings every chunk once,
 * a migration brings only what changed, and the guard's ordered bulk costs fewer mongos round trips than the driver's;
 * with a stalled shard the guard's writes there are UNKNOWN and settled after, and each look of the overlap gate through
 * mongos asks every shard; after a failover nothing is left UNKNOWN.
 */
class ScaleTest {

    @Test
    void configServerLoadAfterTheFirstRead_doesNotGrowWithChunks() throws Exception {
        Scale.Result result = Scale.run(new Scale.Settings(2, 2, List.of(3), List.of(100, 3_000)), Progress.silent());

        assertThat(result.points()).hasSize(2);
        for (Scale.Point point : result.points()) {
            assertThat(point.firstRead().documents())
                    .as("every chunk, once, with config.collections and config.version")
                    .isEqualTo(point.chunks() + 2);
            assertThat(point.quietMinute().commands()).isEqualTo(2);
            assertThat(point.quietMinute().documents()).isEqualTo(2);
            // config.collections, the chunk at the version held (unless it moved), the moved chunk and (4.4, the
            // emulator's default) the donor's control chunk
            assertThat(point.migrationMinute().documents()).isBetween(3.0, 4.0);
            assertThat(point.gateFanOut()).isEqualTo(3);
            assertThat(point.guardChildBatches()).isLessThan(point.driverChildBatches());
        }
        for (Scale.Point point : result.points()) {
            Scale.FaultPhase stalled = point.faults().get(0);
            assertThat(stalled.phase()).isEqualTo("stalled shard");
            assertThat(stalled.guardUnknown())
                    .as("the stalled shard's writes are UNKNOWN")
                    .isPositive();
            assertThat(stalled.guardUnknownAfter())
                    .as("and settled once it resumed")
                    .isZero();
            assertThat(stalled.gateCurrentOps())
                    .as("the opted-in updateMany's retry looked")
                    .isGreaterThanOrEqualTo(1);
            assertThat(stalled.gateShardRequests())
                    .as("each look through mongos asks every shard")
                    .isEqualTo(stalled.gateCurrentOps() * point.shards());
            assertThat(stalled.driverCurrentOps()).isZero();
            Scale.FaultPhase failover = point.faults().get(1);
            assertThat(failover.phase()).isEqualTo("failover");
            assertThat(failover.guardUnknownAfter()).isZero();
        }
        assertThat(result.points().get(1).quietMinute().bytes())
                .isEqualTo(result.points().get(0).quietMinute().bytes());
        assertThat(LabJson.write(result.toJson()))
                .contains("\"quietMinute\"", "\"migrationMinute\"", "\"gateShardRequests\"");
        assertThat(HtmlReport.render(null, null, null, null, null, null, result, null, "java -jar lab.jar scale"))
                .contains("<table id=\"scale\">", "<table id=\"scale-faults\">", "stalled shard", "failover");
    }

    /** The documented runs: {@code -Dscale.shards=5,16,64 -Dscale.chunks=1000,10000,100000 -Dscale.instances=8}. */
    @Test
    @EnabledIfSystemProperty(named = "scale.shards", matches = ".+")
    void documentedRun() throws Exception {
        Scale.Result result = Scale.run(
                new Scale.Settings(
                        Integer.getInteger("scale.instances", 8),
                        Integer.getInteger("scale.mongos", 2),
                        ints(System.getProperty("scale.shards")),
                        ints(System.getProperty("scale.chunks", "1000"))),
                Progress.silent());
        result.print(System.out);
        System.out.println(LabJson.write(result.toJson()));
    }

    private static List<Integer> ints(String list) {
        return Arrays.stream(list.split(",")).map(Integer::valueOf).toList();
    }
}
