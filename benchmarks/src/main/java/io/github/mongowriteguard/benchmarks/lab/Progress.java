package io.github.mongowriteguard.benchmarks.lab;

import java.io.PrintStream;

/** Progress lines on stderr, so that stdout stays the tables or the one JSON object. */
public final class Progress {
    private final PrintStream err;
    private final long start = System.nanoTime();

    public Progress(PrintStream err) {
        this.err = err;
    }

    public void step(String format, Object... args) {
        double seconds = (System.nanoTime() - start) / 1e9;
        err.printf("[lab %6.1fs] %s%n", seconds, String.format(format, args));
        err.flush();
    }

    /** A progress sink that prints nothing, for tests. */
    public static Progress silent() {
        return new Progress(new PrintStream(java.io.OutputStream.nullOutputStream()));
    }
}
