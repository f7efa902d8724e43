package io.github.mongowriteguard.faults;

import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import org.bson.Document;

/**
 * The seeded schedule of operations: per client, a list of single writes and small bulks over inserts without
 * {@code _id}, upserting replacements of the client's own keys, {@code $inc}/{@code $push} on shared counters,
 * {@code updateMany} on shared groups and {@code deleteMany} of scratch sets; and the documents they need first
 * (counters, groups, scratch sets), written before any fault.
 */
public final class Workload {
    public static final String DATABASE = "faults";
    public static final String COLLECTION = "ledger";
    static final int COUNTERS = 4;
    static final int GROUPS = 3;
    static final int GROUP_SIZE = 4;
    static final int SCRATCH_SIZE = 3;
    static final int KEYS_PER_CLIENT = 5;

    private final List<List<Operation>> clients;
    private final List<Document> setUp;

    private Workload(List<List<Operation>> clients, List<Document> setUp) {
        this.clients = clients;
        this.setUp = setUp;
    }

    /** {@code operationsPerClient} operations for each of {@code clientCount} clients, from {@code random}. */
    public static Workload generate(Random random, int clientCount, int operationsPerClient) {
        List<Document> setUp = new ArrayList<>();
        for (int k = 0; k < COUNTERS; k++) {
            setUp.add(new Document("_id", counter(k)).append("n", 0).append("log", List.of()));
        }
        for (int g = 0; g < GROUPS; g++) {
            for (int i = 0; i < GROUP_SIZE; i++) {
                setUp.add(new Document("_id", "g-" + g + "-" + i).append("g", g).append("mlog", List.of()));
            }
        }
        List<List<Operation>> clients = new ArrayList<>();
        for (int c = 0; c < clientCount; c++) {
            List<Operation> operations = new ArrayList<>();
            int[] replaceSequence = new int[KEYS_PER_CLIENT];
            for (int o = 0; o < operationsPerClient; o++) {
                String id = "c" + c + "-" + o;
                int roll = random.nextInt(100);
                List<Write> writes = new ArrayList<>();
                if (roll < 20) {
                    writes.add(new Write(id + "-0", WriteKind.INSERT, null, 0));
                } else if (roll < 38) {
                    writes.add(replace(random, id + "-0", c, replaceSequence));
                } else if (roll < 58) {
                    writes.add(new Write(id + "-0", WriteKind.INC, counter(random.nextInt(COUNTERS)), 0));
                } else if (roll < 68) {
                    writes.add(
                            new Write(id + "-0", WriteKind.UPDATE_MANY, Integer.toString(random.nextInt(GROUPS)), 0));
                } else if (roll < 75) {
                    String scratch = "s-" + id;
                    for (int i = 0; i < SCRATCH_SIZE; i++) {
                        setUp.add(new Document("_id", scratch + "-" + i).append("s", scratch));
                    }
                    writes.add(new Write(id + "-0", WriteKind.DELETE_MANY, scratch, 0));
                } else {
                    int size = 2 + random.nextInt(3);
                    for (int w = 0; w < size; w++) {
                        String tag = id + "-" + w;
                        switch (random.nextInt(3)) {
                            case 0 -> writes.add(new Write(tag, WriteKind.INSERT, null, 0));
                            case 1 -> writes.add(replace(random, tag, c, replaceSequence));
                            default -> writes.add(new Write(tag, WriteKind.INC, counter(random.nextInt(COUNTERS)), 0));
                        }
                    }
                }
                operations.add(new Operation(id, c, writes, random.nextBoolean()));
            }
            clients.add(List.copyOf(operations));
        }
        return new Workload(List.copyOf(clients), List.copyOf(setUp));
    }

    private static Write replace(Random random, String tag, int client, int[] sequences) {
        int key = random.nextInt(KEYS_PER_CLIENT);
        return new Write(tag, WriteKind.REPLACE, "e-" + client + "-" + key, ++sequences[key]);
    }

    static String counter(int k) {
        return "k-" + k;
    }

    /** Each client's operations, in the order it runs them. */
    public List<List<Operation>> clients() {
        return clients;
    }

    /** The documents written before the run (counters, groups, scratch sets). */
    public List<Document> setUp() {
        return setUp;
    }

    public int operationCount() {
        return clients.stream().mapToInt(List::size).sum();
    }

    public int writeCount() {
        return clients.stream()
                .flatMap(List::stream)
                .mapToInt(o -> o.writes().size())
                .sum();
    }
}
