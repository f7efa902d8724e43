package io.github.mongowriteguard.internal.execution;

import com.mongodb.ServerAddress;
import io.github.mongowriteguard.copies.CopyRecord;
import java.util.ArrayList;
import java.util.List;
import java.util.function.Consumer;
import org.jspecify.annotations.Nullable;

/**
 * The tally of one copy sent on a worker thread: what {@link CopySender} counts, kept in the order it happened and
 * replayed into the outcome by the calling thread once the send is done, so that the outcome (its counters, its copies
 * in order, its first server) is built by one thread and comes out the same whichever worker finished first.
 *
 * <p>Written by one worker, then read by the calling thread after the worker's task completed (the task's completion
 * orders the two), never by both at once.
 */
final class DeferredTally implements CopySender.Tally {
    private final List<Consumer<CopySender.Tally>> counted = new ArrayList<>();

    @Override
    public void command() {
        counted.add(CopySender.Tally::command);
    }

    @Override
    public void send() {
        counted.add(CopySender.Tally::send);
    }

    @Override
    public void server(@Nullable ServerAddress address) {
        counted.add(tally -> tally.server(address));
    }

    @Override
    public void copy(CopyRecord copy) {
        counted.add(tally -> tally.copy(copy));
    }

    @Override
    public void stillRunning(CopyRecord copy) {
        counted.add(tally -> tally.stillRunning(copy));
    }

    /** Counts into {@code into} what was counted here, in order. */
    void replayInto(CopySender.Tally into) {
        counted.forEach(step -> step.accept(into));
    }
}
