package io.github.mongowriteguard.benchmarks.lab;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import org.junit.jupiter.api.Test;

class ProgressTest {

    private final ByteArrayOutputStream buffer = new ByteArrayOutputStream();
    private final PrintStream err = new PrintStream(buffer, true, StandardCharsets.UTF_8);

    private String printed() {
        return buffer.toString(StandardCharsets.UTF_8);
    }

    @Test
    void withoutATerminal_onePhaseIsOneLineAndStepsPrintNothing() {
        try (Progress progress = Progress.to(err, Progress.Mode.LINES)) {
            progress.start(150);
            progress.phase("latency: warming up %s", "guarded");
            for (int i = 1; i <= 150; i++) {
                progress.step("latency: warming up guarded, %d of 150", i);
            }
            progress.phase("latency: every shard normal");
            progress.note("could not shard %s", "x");
        }
        String[] lines = printed().split("\n");
        assertThat(lines).hasSize(4);
        assertThat(lines[0]).matches("\\[lab +\\d+\\.\\ds] latency: warming up guarded");
        assertThat(lines[2]).endsWith("could not shard x");
        assertThat(lines[3]).endsWith("] done");
        assertThat(printed()).doesNotContain("of 150", "\r");
    }

    @Test
    void onATerminal_oneBarUpdatesInPlace() {
        Progress progress = Progress.to(err, Progress.Mode.BAR);
        progress.start(40);
        progress.phase("roundtrips: sweep");
        for (int i = 1; i <= 40; i++) {
            progress.step("roundtrips: bulk %d", i);
        }
        progress.close();
        progress.note("report written to %s", "lab-report.html");
        String printed = printed();
        assertThat(printed).contains("\r", "lab", "100%", "40/40");
        // Every redraw starts with a carriage return: the bar ends with one newline, and the note has its own line.
        assertThat(printed.chars().filter(c -> c == '\n').count()).isEqualTo(2);
        assertThat(printed).endsWith("report written to lab-report.html\n");
        assertThat(progress.done()).isEqualTo(progress.planned()).isEqualTo(40);
    }

    @Test
    void none_printsNothing() {
        try (Progress progress = Progress.to(err, Progress.Mode.NONE)) {
            progress.start(3);
            progress.phase("a");
            progress.step("b");
            progress.note("c");
        }
        assertThat(printed()).isEmpty();
    }

    @Test
    void auto_isResolvedOnce() {
        assertThat(Progress.to(err, Progress.Mode.AUTO).mode()).isIn(Progress.Mode.BAR, Progress.Mode.LINES);
    }
}
