package io.github.mongowriteguard.benchmarks.lab;

import java.io.IOException;
import java.io.OutputStream;
import java.io.PrintStream;
import java.nio.file.Files;
import java.nio.file.Path;
import me.tongfei.progressbar.ConsoleProgressBarConsumer;
import me.tongfei.progressbar.ProgressBar;
import me.tongfei.progressbar.ProgressBarBuilder;
import me.tongfei.progressbar.ProgressBarStyle;

/**
 * The lab's progress on stderr, so that stdout stays the tables or the one JSON object. On a terminal: one progress
 * bar (me.tongfei:progressbar) that updates in place, with the current step as its message. Elsewhere (a file, a
 * pipe, CI): one line per phase, about a dozen for the full run. Notes (a file written, a skipped step) are printed
 * in both modes.
 *
 * <pre>{@code
 * try (Progress progress = Progress.to(System.err, Progress.Mode.AUTO)) {
 *     progress.start(total);                       // units of work the run will step through
 *     progress.phase("latency: warming up");       // a line, or the bar's message
 *     progress.step("latency: guarded 3 of 50");   // the bar moves by one; nothing printed without a terminal
 * }
 * }</pre>
 */
public final class Progress implements AutoCloseable {

    /** How progress is shown; {@code AUTO} is a bar when stderr is a terminal and phase lines otherwise. */
    public enum Mode {
        AUTO,
        BAR,
        LINES,
        NONE
    }

    private final PrintStream err;
    private final Mode mode;
    private final long startNanos = System.nanoTime();
    private ProgressBar bar;
    private ClosingConsumer consumer;
    private long planned;
    private long done;
    private boolean closed;

    private Progress(PrintStream err, Mode mode) {
        this.err = err;
        this.mode = mode;
    }

    /** Progress on {@code err}; {@code AUTO} becomes {@code BAR} or {@code LINES} here, once. */
    public static Progress to(PrintStream err, Mode mode) {
        Mode resolved = mode == Mode.AUTO ? (stderrIsTerminal() ? Mode.BAR : Mode.LINES) : mode;
        return new Progress(err, resolved);
    }

    /** A progress sink that prints nothing, for tests. */
    public static Progress silent() {
        return new Progress(new PrintStream(OutputStream.nullOutputStream()), Mode.NONE);
    }

    /** The mode in use ({@code AUTO} resolved). */
    public Mode mode() {
        return mode;
    }

    /** Starts the bar with the units of work the run will step through (ignored without a bar). */
    public void start(long units) {
        planned = Math.max(1, units);
        if (mode == Mode.BAR && bar == null) {
            bar = new ProgressBarBuilder()
                    .setTaskName("lab")
                    .setInitialMax(planned)
                    .setStyle(ProgressBarStyle.ASCII)
                    .setConsumer(consumer = new ClosingConsumer(err))
                    .setUpdateIntervalMillis(250)
                    .continuousUpdate()
                    .hideEta() // steps differ in length by three orders of magnitude: an ETA from their rate would
                    // mislead
                    .build();
        }
    }

    /** A new phase: one line without a terminal, the bar's message on one. */
    public void phase(String format, Object... args) {
        String text = String.format(format, args);
        if (mode == Mode.LINES) {
            line(text);
        } else if (bar != null) {
            bar.setExtraMessage(text);
        }
    }

    /** One unit of work done: moves the bar and shows {@code detail}; prints nothing without a terminal. */
    public void step(String format, Object... args) {
        done++;
        if (bar != null) {
            bar.setExtraMessage(String.format(format, args));
            bar.step();
        }
    }

    /** Something the user should read whatever the mode (a file written, a step skipped). */
    public void note(String format, Object... args) {
        String text = String.format(format, args);
        if (mode == Mode.NONE) {
            return;
        }
        if (bar != null) {
            // Clear the bar's line, print the note, and let the bar redraw itself below it.
            err.print("\r\u001b[2K");
            line(text);
            bar.refresh();
        } else {
            line(text);
        }
    }

    /** Units stepped so far. */
    long done() {
        return done;
    }

    /** Units planned by {@link #start}. */
    long planned() {
        return planned;
    }

    private void line(String text) {
        double seconds = (System.nanoTime() - startNanos) / 1e9;
        err.printf("[lab %6.1fs] %s%n", seconds, text);
        err.flush();
    }

    /** Ends the bar (or prints the closing line); later notes are plain lines. */
    @Override
    public void close() {
        if (closed) {
            return;
        }
        closed = true;
        if (bar != null) {
            bar.stepTo(bar.getMax());
            bar.setExtraMessage("done");
            bar.close();
            bar = null;
            if (!consumer.closed) {
                // progressbar 0.10's update action ends the line only from its second run: a bar closed before its
                // first
                // scheduled refresh leaves the line open, and the next note would be printed on it.
                err.println();
                err.flush();
            }
        }
        if (mode == Mode.LINES && planned > 0) {
            line("done");
        }
    }

    /** The console consumer, telling whether the library ended the bar's line itself. */
    private static final class ClosingConsumer extends ConsoleProgressBarConsumer {
        private volatile boolean closed;

        ClosingConsumer(PrintStream out) {
            super(out);
        }

        @Override
        public void close() {
            closed = true;
            super.close();
        }
    }

    /**
     * True when stderr is a terminal: on Linux, file descriptor 2 links to a tty; elsewhere, the JVM has a console.
     * {@code TERM=dumb} never gets a bar.
     */
    static boolean stderrIsTerminal() {
        if ("dumb".equals(System.getenv("TERM"))) {
            return false;
        }
        Path fd = Path.of("/proc/self/fd/2");
        if (Files.exists(fd, java.nio.file.LinkOption.NOFOLLOW_LINKS)) {
            try {
                String target = Files.readSymbolicLink(fd).toString();
                return target.startsWith("/dev/pts/") || target.startsWith("/dev/tty");
            } catch (IOException | UnsupportedOperationException | SecurityException e) {
                return false;
            }
        }
        return System.console() != null;
    }
}
