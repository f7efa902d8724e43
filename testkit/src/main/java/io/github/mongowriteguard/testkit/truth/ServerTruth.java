package io.github.mongowriteguard.testkit.truth;

import java.time.Duration;
import java.util.ArrayList;
import java.util.Collection;
import java.util.Collections;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.function.Function;
import java.util.function.Predicate;

/**
 * The server-side truth that tests assert on: every command the emulated server received, grouped into copies
 * by {@code (lsid, txnNumber)}. Handshakes and heartbeats are not recorded.
 *
 * <pre>{@code
 * ServerTruth truth = cluster.truth();
 * Predicate<ReceivedCommand> inserts = c -> c.commandName().equals("insert");
 * assertThat(truth.commands(inserts)).hasSize(8);
 * assertThat(truth.copies(inserts)).hasSize(4);
 * assertThat(truth.maxConcurrentCopies(inserts)).isEqualTo(4);
 * }</pre>
 */
public final class ServerTruth {
    private final Collection<CommandRecord> records;

    /**
     * A view over the given records; the emulator keeps adding to them.
     *
     * @param records a node's record store ({@link #newStore()})
     */
    public ServerTruth(Collection<CommandRecord> records) {
        this.records = records;
    }

    /**
     * A truth that joins several nodes' records (a sharded cluster).
     *
     * @param parts each node's truth
     * @return the joined truth
     */
    public static ServerTruth union(List<ServerTruth> parts) {
        return new ServerTruth(new UnionCollection(parts));
    }

    /**
     * Every recorded command, in arrival order per node.
     *
     * @return snapshots of the commands
     */
    public List<ReceivedCommand> commands() {
        return commands(c -> true);
    }

    /**
     * The recorded commands that match {@code filter}.
     *
     * @param filter which commands count
     * @return snapshots of those commands
     */
    public List<ReceivedCommand> commands(Predicate<ReceivedCommand> filter) {
        List<ReceivedCommand> result = new ArrayList<>();
        for (CommandRecord record : records) {
            ReceivedCommand command = record.snapshot();
            if (filter.test(command)) {
                result.add(command);
            }
        }
        result.sort((a, b) -> Long.compare(a.startNanos(), b.startNanos()));
        return result;
    }

    /**
     * Commands of the given name, e.g. {@code "insert"}.
     *
     * @param commandName the command's name
     * @return snapshots of those commands
     */
    public List<ReceivedCommand> commands(String commandName) {
        return commands(c -> c.commandName().equals(commandName));
    }

    /**
     * The matching commands grouped by the copy they belong to, in order of each copy's first command.
     *
     * @param filter which commands count
     * @return the commands by copy
     */
    public Map<TxnId, List<ReceivedCommand>> copies(Predicate<ReceivedCommand> filter) {
        Map<TxnId, List<ReceivedCommand>> copies = new LinkedHashMap<>();
        for (ReceivedCommand command : commands(filter)) {
            copies.computeIfAbsent(command.txnId(), id -> new ArrayList<>()).add(command);
        }
        return copies;
    }

    /**
     * The largest number of copies that were running at the same moment: a copy runs from its first command's
     * arrival until its last command ended (a copy still running counts until now).
     *
     * @param filter which commands count
     * @return the largest number of copies running at once
     */
    public int maxConcurrentCopies(Predicate<ReceivedCommand> filter) {
        return maxConcurrentCopiesPerKey(filter, command -> List.of("")).max();
    }

    /** The most copies of one key that ran at once, and that key (empty when nothing matched). */
    public record CopiesAtOnce(int max, String key) {}

    /**
     * The largest number of distinct copies ({@code (lsid, txnNumber)}) of one key running at the same moment, over
     * every key: a key is what one logical write is known by (e.g. a record's statement), and a command counts for
     * each key {@code keys} gives it. A copy of a key runs from the arrival of its first command carrying the key
     * until its last such command ended (still running: until now); a resend of the same copy is the same copy.
     *
     * @param filter which commands count
     * @param keys   the keys of a command's logical writes (none: the command does not count)
     * @return the largest count and its key
     * @throws IllegalStateException when {@code keys} reads the statements of a command whose node's truth was full
     *     (it holds at most 250,000 write statements between resets, {@link ReceivedCommand#statementsDropped()}):
     *     the count would be too low; reset the truth between measurements
     */
    public CopiesAtOnce maxConcurrentCopiesPerKey(
            Predicate<ReceivedCommand> filter, Function<ReceivedCommand, ? extends Collection<String>> keys) {
        return maxConcurrentCopiesPerKey(commands(filter), keys);
    }

    /**
     * {@link #maxConcurrentCopiesPerKey(Predicate, Function)} over snapshots already taken (e.g. several truths').
     *
     * @param commands the commands
     * @param keys     the keys of a command's logical writes (none: the command does not count)
     * @return the largest count and its key
     * @throws IllegalStateException when {@code keys} reads the statements of a command whose node's truth dropped
     *     them ({@link ReceivedCommand#statements()})
     */
    public static CopiesAtOnce maxConcurrentCopiesPerKey(
            Collection<ReceivedCommand> commands, Function<ReceivedCommand, ? extends Collection<String>> keys) {
        Map<String, Map<TxnId, long[]>> spans = new HashMap<>();
        long now = System.nanoTime();
        for (ReceivedCommand command : commands) {
            for (String key : keys.apply(command)) {
                long[] span = spans.computeIfAbsent(key, k -> new HashMap<>())
                        .computeIfAbsent(command.txnId(), id -> new long[] {Long.MAX_VALUE, Long.MIN_VALUE});
                span[0] = Math.min(span[0], command.startNanos());
                span[1] = Math.max(span[1], command.running() ? now + 1 : command.endNanos());
            }
        }
        int max = 0;
        String worst = "";
        for (Map.Entry<String, Map<TxnId, long[]>> key : spans.entrySet()) {
            List<long[]> events = new ArrayList<>();
            for (long[] span : key.getValue().values()) {
                events.add(new long[] {span[0], 1});
                events.add(new long[] {span[1], -1});
            }
            // Ends before starts at the same instant: touching copies did not overlap.
            events.sort((a, b) -> a[0] != b[0] ? Long.compare(a[0], b[0]) : Long.compare(a[1], b[1]));
            int running = 0;
            for (long[] event : events) {
                running += (int) event[1];
                if (running > max) {
                    max = running;
                    worst = key.getKey();
                }
            }
        }
        return new CopiesAtOnce(max, worst);
    }

    /**
     * Copies with at least one matching command still running now.
     *
     * @param filter which commands count
     * @return the number of copies running now
     */
    public int runningCopies(Predicate<ReceivedCommand> filter) {
        return (int) copies(filter).values().stream()
                .filter(copy -> copy.stream().anyMatch(ReceivedCommand::running))
                .count();
    }

    /**
     * Documents written by the matching commands (inserted, modified, upserted, deleted).
     *
     * @param filter which commands count
     * @return the documents
     */
    public long documentsApplied(Predicate<ReceivedCommand> filter) {
        return commands(filter).stream().mapToLong(ReceivedCommand::applied).sum();
    }

    /**
     * Waits until no matching command is running, e.g. until stalled writes that clients gave up on have
     * finished on the server.
     *
     * @return true if idle, false if the timeout passed first
     * @param filter  which commands count
     * @param timeout the longest wait
     * @throws InterruptedException when interrupted while waiting
     */
    public boolean awaitIdle(Predicate<ReceivedCommand> filter, Duration timeout) throws InterruptedException {
        long until = System.nanoTime() + timeout.toNanos();
        while (System.nanoTime() - until < 0) {
            boolean busy = false;
            for (CommandRecord record : records) {
                if (record.running() && filter.test(record.snapshot())) {
                    busy = true;
                    break;
                }
            }
            if (!busy) {
                return true;
            }
            Thread.sleep(5);
        }
        return false;
    }

    /**
     * Forgets everything recorded so far (commands still running stay until they end), and so frees each node's bound
     * of 250,000 write statements held: a deployment shared by many tests or rounds records every round's statements
     * when it is reset between them.
     */
    public void reset() {
        records.removeIf(record -> !record.running());
    }

    /** A read-only union of several truths' record collections. */
    private static final class UnionCollection extends java.util.AbstractCollection<CommandRecord> {
        private final List<ServerTruth> parts;

        UnionCollection(List<ServerTruth> parts) {
            this.parts = List.copyOf(parts);
        }

        @Override
        public java.util.Iterator<CommandRecord> iterator() {
            List<CommandRecord> all = new ArrayList<>();
            for (ServerTruth part : parts) {
                all.addAll(part.records);
            }
            return Collections.unmodifiableList(all).iterator();
        }

        @Override
        public int size() {
            return parts.stream().mapToInt(p -> p.records.size()).sum();
        }

        @Override
        public boolean removeIf(Predicate<? super CommandRecord> filter) {
            boolean removed = false;
            for (ServerTruth part : parts) {
                removed |= part.records.removeIf(filter);
            }
            return removed;
        }
    }

    /**
     * A fresh, thread-safe record store for one node, holding at most 250,000 write statements between resets (a command
     * that arrives while it is full is kept without them: {@link ReceivedCommand#statementsDropped()}).
     *
     * @return an empty store
     */
    public static Collection<CommandRecord> newStore() {
        return new RecordStore();
    }

    /** Sets the statement bound of every node store behind this truth (a seam for tests). */
    void maxStatementsKept(long max) {
        if (records instanceof RecordStore store) {
            store.maxStatements(max);
        } else if (records instanceof UnionCollection union) {
            union.parts.forEach(part -> part.maxStatementsKept(max));
        }
    }
}
