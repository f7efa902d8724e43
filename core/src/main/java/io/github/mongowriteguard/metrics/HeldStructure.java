package io.github.mongowriteguard.metrics;

import java.util.Objects;

/**
 * One structure the guard holds in memory between calls, its size now and its bound: what
 * {@code WriteGuard.getHeldStructures()} lists and the guard's meters report as the gauges
 * {@code mongodb.guard.held} and {@code mongodb.guard.held.bound}, tagged {@code structure}.
 *
 * <pre>{@code
 * for (HeldStructure held : guard.getHeldStructures()) {
 *     log.info("{}: {} of {} {}", held.name(), held.size(), held.bound(), held.unit());
 * }
 * }</pre>
 *
 * @param name  what it is, e.g. {@code catalog.chunks}: a bounded tag value
 * @param unit  what it counts, e.g. {@code chunks}
 * @param size  how many it holds now
 * @param bound the most it holds, or {@link #UNBOUNDED} when nothing but time (or the garbage collector) bounds it
 */
public record HeldStructure(String name, String unit, long size, long bound) {

    /** The {@link #bound()} of a structure no count bounds. */
    public static final long UNBOUNDED = -1;

    /**
     * Checks the values.
     *
     * @param name  what it is: a bounded tag value
     * @param unit  what it counts
     * @param size  how many it holds now
     * @param bound the most it holds, or {@link #UNBOUNDED}
     * @throws NullPointerException     if {@code name} or {@code unit} is null
     * @throws IllegalArgumentException if {@code size} is negative or {@code bound} is below {@link #UNBOUNDED}
     */
    public HeldStructure {
        Objects.requireNonNull(name, "name");
        Objects.requireNonNull(unit, "unit");
        if (size < 0 || bound < UNBOUNDED) {
            throw new IllegalArgumentException(
                    "size (" + size + ") must be at least 0 and bound (" + bound + ") at least -1");
        }
    }
}
