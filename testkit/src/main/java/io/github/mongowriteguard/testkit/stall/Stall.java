package io.github.mongowriteguard.testkit.stall;

import java.time.Duration;
import java.util.Objects;
import java.util.Set;

/**
 * A controllable server-side stall: every matching command waits {@code duration} (or until
 * {@link StallHandle#release()}) after it checked out its session and before the engine runs it, so a driver
 * resend of the same write waits behind it, as on mongod.
 *
 * <pre>{@code
 * try (StallHandle stall = node.stall(Stall.uninterruptible("shop.orders", Duration.ofSeconds(5)))) {
 *     ... // writes to shop.orders now take 5 s each on the server and cannot be stopped
 * }
 * }</pre>
 *
 * @param namespace {@code db.collection}, or {@code "*"} for every collection
 * @param commands  the command names that stall (default: the write commands)
 * @param mode      interruptible or not
 * @param duration  how long each matching command waits
 */
public record Stall(String namespace, Set<String> commands, StallMode mode, Duration duration) {
    /**
     * The commands a stall holds unless told otherwise: {@code insert}, {@code update}, {@code delete}, {@code findAndModify}.
     */
    public static final Set<String> WRITE_COMMANDS = Set.of("insert", "update", "delete", "findAndModify");

    /**
     * Checks the components and copies the command names.
     *
     * @param namespace {@code db.collection}, or {@code "*"} for every collection
     * @param commands  the command names that stall
     * @param mode      interruptible or not
     * @param duration  how long each matching command waits
     * @throws IllegalArgumentException for a negative duration
     */
    public Stall {
        Objects.requireNonNull(namespace, "namespace");
        Objects.requireNonNull(mode, "mode");
        commands = Set.copyOf(commands);
        if (duration.isNegative()) {
            throw new IllegalArgumentException("stall duration (" + duration + ") must not be negative");
        }
    }

    /**
     * A stall that honours {@code maxTimeMS}, {@code killOp} and {@code killSessions}, on the write commands.
     *
     * @param namespace {@code db.collection}, or {@code "*"}
     * @param duration  how long each write waits
     * @return the stall
     */
    public static Stall interruptible(String namespace, Duration duration) {
        return new Stall(namespace, WRITE_COMMANDS, StallMode.INTERRUPTIBLE, duration);
    }

    /**
     * A stall that runs to its end and then writes, whatever the deadline or kills (like a storage-engine loop), on the
     * write commands.
     *
     * @param namespace {@code db.collection}, or {@code "*"}
     * @param duration  how long each write waits
     * @return the stall
     */
    public static Stall uninterruptible(String namespace, Duration duration) {
        return new Stall(namespace, WRITE_COMMANDS, StallMode.UNINTERRUPTIBLE, duration);
    }

    /**
     * The same stall for other command names.
     *
     * @param names the command names, e.g. {@code find}
     * @return the new stall
     */
    public Stall forCommands(String... names) {
        return new Stall(namespace, Set.of(names), mode, duration);
    }

    /**
     * Whether a command stalls.
     *
     * @param ns          the command's namespace
     * @param commandName the command's name
     * @return true when this stall holds it
     */
    public boolean matches(String ns, String commandName) {
        return commands.contains(commandName) && (namespace.equals("*") || namespace.equals(ns));
    }
}
