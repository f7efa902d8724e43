package io.github.mongowriteguard.benchmarks.lab;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.OutputStream;
import java.io.PrintStream;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * The settle scenario, short: under write-concern errors and lost replies the consumer that follows the README's
 * recipe (settle first) loses nothing, applies nothing twice and leaves nothing unknown, while the raw consumer that
 * sends a poll again after a write-concern error applies some {@code $inc}s twice, which the per-poll check sees.
 */
class SettlingTest {

    @Test
    void theRecipe_losesNothing_doublesNothing_leavesNothingUnknown_whereWholePollRetriesDouble() throws Exception {
        Settling.Settings settings = new Settling.Settings(400, 100, 20, 1_000, 3, 42);
        List<Settling.Row> rows = Settling.run(
                settings,
                List.of(Settling.Fault.WRITE_CONCERN_ERROR, Settling.Fault.LOST_REPLIES),
                new PrintStream(OutputStream.nullOutputStream()));

        assertThat(rows).hasSize(4);
        for (Settling.Row row : rows) {
            if (row.client().equals("guarded")) {
                assertThat(row.lost()).as(row.fault() + ": lost").isZero();
                assertThat(row.appliedTwice())
                        .as(row.fault() + ": applied twice")
                        .isZero();
                assertThat(row.unknownLeft()).as(row.fault() + ": unknown left").isZero();
                assertThat(row.deadLettered())
                        .as(row.fault() + ": dead-lettered")
                        .isZero();
            }
        }
        Settling.Row rawWriteConcern = rows.get(0);
        assertThat(rawWriteConcern.client()).isEqualTo("raw");
        assertThat(rawWriteConcern.appliedTwice())
                .as("the raw consumer's whole poll sent again after a write-concern error")
                .isPositive();
        assertThat(LabJson.write(Settling.toJson(settings, rows)))
                .contains("\"lost\"", "\"appliedTwice\"", "\"deadLettered\"", "\"unknownLeft\"");
    }
}
