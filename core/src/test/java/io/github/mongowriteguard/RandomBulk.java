package io.github.mongowriteguard;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Random;

import org.bson.Document;

import com.mongodb.client.model.DeleteManyModel;
import com.mongodb.client.model.DeleteOneModel;
import com.mongodb.client.model.InsertOneModel;
import com.mongodb.client.model.ReplaceOneModel;
import com.mongodb.client.model.ReplaceOptions;
import com.mongodb.client.model.UpdateManyModel;
import com.mongodb.client.model.UpdateOneModel;
import com.mongodb.client.model.UpdateOptions;
import com.mongodb.client.model.WriteModel;

/**
 * One random bulk over a small key space ({@code _id} 0..7), as a description that builds fresh, independent
 * {@link WriteModel}s each time (the guard writes {@code _id}s into its insert documents; the driver's run gets its
 * own copies). Writes are kept as JSON so every build is a deep copy.
 *
 * <p>Keying and superseding are computed here from the guard's documented rules, independently of the planner, so
 * the test's expectation does not come from the code under test.
 */
final class RandomBulk {
    static final int KEYS = 8;

    enum Kind { INSERT_WITH_ID, INSERT_WITHOUT_ID, REPLACE_ONE, UPDATE_ONE, UPDATE_MANY, DELETE_ONE, DELETE_MANY }

    /** One write: its kind, filter and body as JSON, and (for an insert without {@code _id}) the id the guard gave it. */
    static final class Op {
        final Kind kind;
        final String filter;
        final String body;
        final boolean upsert;
        /** For inserts without _id: filled in from the guard's copy after planning. */
        Object assignedId;

        Op(Kind kind, String filter, String body, boolean upsert) {
            this.kind = kind;
            this.filter = filter;
            this.body = body;
            this.upsert = upsert;
        }

        WriteModel<Document> build(boolean withAssignedId) {
            switch (kind) {
                case INSERT_WITH_ID:
                    return new InsertOneModel<>(Document.parse(body));
                case INSERT_WITHOUT_ID: {
                    Document document = Document.parse(body);
                    if (withAssignedId) {
                        document.put("_id", Objects.requireNonNull(assignedId, "assignedId"));
                    }
                    return new InsertOneModel<>(document);
                }
                case REPLACE_ONE:
                    return new ReplaceOneModel<>(Document.parse(filter), Document.parse(body), new ReplaceOptions().upsert(upsert));
                case UPDATE_ONE:
                    return new UpdateOneModel<>(Document.parse(filter), Document.parse(body), new UpdateOptions().upsert(upsert));
                case UPDATE_MANY:
                    return new UpdateManyModel<>(Document.parse(filter), Document.parse(body), new UpdateOptions().upsert(upsert));
                case DELETE_ONE:
                    return new DeleteOneModel<>(Document.parse(filter));
                case DELETE_MANY:
                    return new DeleteManyModel<>(Document.parse(filter));
                default:
                    throw new AssertionError(kind);
            }
        }

        /**
         * The {@code _id} the write is keyed by (the guard's rule: exactly one document named by {@code _id}
         * equality), or null when unkeyed. An insert without {@code _id} is keyed by the id it was given.
         */
        Object key() {
            switch (kind) {
                case INSERT_WITH_ID:
                    return Document.parse(body).get("_id");
                case INSERT_WITHOUT_ID:
                    return assignedId;
                case UPDATE_MANY:
                case DELETE_MANY:
                    return null;
                default:
                    return Document.parse(filter).get("_id");
            }
        }

        /** Whether this write alone decides its document: a delete, or a replace-upsert keeping the _id, on a pure _id filter. */
        boolean definesFinalDocument() {
            Document parsed = filter == null ? null : Document.parse(filter);
            boolean pureId = parsed != null && parsed.size() == 1 && parsed.containsKey("_id");
            if (kind == Kind.DELETE_ONE) {
                return pureId;
            }
            if (kind == Kind.REPLACE_ONE && upsert && pureId) {
                Object replacementId = Document.parse(body).get("_id");
                return replacementId == null || replacementId.equals(parsed.get("_id"));
            }
            return false;
        }

        @Override
        public String toString() {
            return kind + (filter == null ? "" : " " + filter) + (body == null ? "" : " " + body) + (upsert ? " upsert" : "")
                + (assignedId == null ? "" : " (id " + assignedId + ")");
        }
    }

    final long seed;
    final boolean ordered;
    final List<Document> initial;
    final List<Op> ops;

    private RandomBulk(long seed, boolean ordered, List<Document> initial, List<Op> ops) {
        this.seed = seed;
        this.ordered = ordered;
        this.initial = initial;
        this.ops = ops;
    }

    /** A bulk drawn from {@code seed} alone: the same seed gives the same bulk. */
    static RandomBulk generate(long seed) {
        Random random = new Random(seed);
        List<Document> initial = new ArrayList<>();
        for (int id = 0; id < KEYS; id++) {
            if (random.nextBoolean()) {
                initial.add(new Document("_id", id).append("n", value(random)).append("tag", tag(random)));
            }
        }
        boolean ordered = random.nextBoolean();
        // Half the bulks only name documents by _id (the guard can run them in rounds); the rest mix in every kind.
        boolean keyedOnly = random.nextBoolean();
        int size = 1 + random.nextInt(12);
        List<Op> ops = new ArrayList<>(size);
        for (int i = 0; i < size; i++) {
            ops.add(op(random, keyedOnly));
        }
        return new RandomBulk(seed, ordered, List.copyOf(initial), ops);
    }

    private static Op op(Random random, boolean keyedOnly) {
        int key = random.nextInt(KEYS);
        String tag = tag(random);
        int choice = random.nextInt(keyedOnly ? 5 : 7);
        Kind kind = Kind.values()[keyedOnly ? new int[] {0, 1, 2, 3, 5}[choice] : choice];
        switch (kind) {
            case INSERT_WITH_ID:
                return new Op(kind, null, new Document("_id", key).append("n", value(random)).append("tag", tag).toJson(), false);
            case INSERT_WITHOUT_ID:
                return new Op(kind, null, new Document("n", value(random)).append("tag", tag).toJson(), false);
            case REPLACE_ONE: {
                Document replacement = new Document("n", value(random)).append("tag", tag).append("r", true);
                int withId = random.nextInt(10);
                if (withId < 3) {
                    replacement = new Document("_id", key).append("n", replacement.get("n")).append("tag", tag).append("r", true);
                } else if (withId == 3) {
                    replacement.append("_id", (key + 1) % KEYS); // names another _id: the server refuses (immutable _id)
                }
                return new Op(kind, filter(random, key, keyedOnly), replacement.toJson(), random.nextBoolean());
            }
            case UPDATE_ONE:
                return new Op(kind, filter(random, key, keyedOnly), update(random), random.nextInt(3) == 0);
            case UPDATE_MANY:
                return new Op(kind, random.nextInt(4) == 0 ? new Document("_id", key).toJson() : new Document("tag", tag).toJson(),
                    update(random), random.nextInt(4) == 0);
            case DELETE_ONE:
                return new Op(kind, filter(random, key, keyedOnly), null, false);
            case DELETE_MANY:
                return new Op(kind, random.nextInt(3) == 0 ? new Document("n", new Document("$gt", 50)).toJson()
                    : new Document("tag", tag).toJson(), null, false);
            default:
                throw new AssertionError(kind);
        }
    }

    /** Mostly {@code {_id: k}}; sometimes {@code {_id: k, tag: t}} (keyed, with another condition); unkeyed {@code {tag: t}}. */
    private static String filter(Random random, int key, boolean keyedOnly) {
        int choice = random.nextInt(10);
        if (choice < 6) {
            return new Document("_id", key).toJson();
        }
        if (choice < 9 || keyedOnly) {
            return new Document("_id", key).append("tag", tag(random)).toJson();
        }
        return new Document("tag", tag(random)).toJson();
    }

    private static String update(Random random) {
        switch (random.nextInt(5)) {
            case 0:
                return new Document("$set", new Document("n", value(random))).toJson();
            case 1:
            case 2:
                return new Document("$inc", new Document("n", 1 + random.nextInt(5))).toJson(); // fails on a string n
            case 3:
                return new Document("$unset", new Document("tag", "")).toJson();
            default:
                return new Document("$set", new Document("tag", tag(random))).append("$inc", new Document("u", 1)).toJson();
        }
    }

    /** Mostly a number; sometimes a string, on which {@code $inc} fails. */
    private static Object value(Random random) {
        return random.nextInt(8) == 0 ? "s" + random.nextInt(3) : random.nextInt(100);
    }

    private static String tag(Random random) {
        return String.valueOf((char) ('a' + random.nextInt(3)));
    }

    List<WriteModel<Document>> models(boolean withAssignedIds) {
        List<WriteModel<Document>> models = new ArrayList<>(ops.size());
        ops.forEach(op -> models.add(op.build(withAssignedIds)));
        return models;
    }

    /** Reads back the ids the guard wrote into its own insert documents. */
    void recordAssignedIds(List<WriteModel<Document>> guardModels) {
        for (int i = 0; i < ops.size(); i++) {
            if (ops.get(i).kind == Kind.INSERT_WITHOUT_ID) {
                ops.get(i).assignedId = ((InsertOneModel<Document>) guardModels.get(i)).getDocument().get("_id");
            }
        }
    }

    boolean allKeyed() {
        return ops.stream().allMatch(op -> op.key() != null);
    }

    /** Keyed writes grouped by key, in the caller's order; unkeyed writes are not in it. */
    Map<Object, List<Integer>> writesByKey() {
        Map<Object, List<Integer>> byKey = new LinkedHashMap<>();
        for (int i = 0; i < ops.size(); i++) {
            Object key = ops.get(i).key();
            if (key != null) {
                byKey.computeIfAbsent(key, k -> new ArrayList<>()).add(i);
            }
        }
        return byKey;
    }

    boolean hasRepeatedKey() {
        return writesByKey().values().stream().anyMatch(writes -> writes.size() > 1);
    }

    /** index -> the later write on the same key that supersedes it (the guard's documented rule). */
    Map<Integer, Integer> superseded() {
        Map<Integer, Integer> superseded = new LinkedHashMap<>();
        for (List<Integer> writes : writesByKey().values()) {
            int last = writes.get(writes.size() - 1);
            if (ops.get(last).definesFinalDocument()) {
                writes.subList(0, writes.size() - 1).forEach(earlier -> superseded.put(earlier, last));
            }
        }
        return superseded;
    }

    /** Writes on one key that are sent (not superseded), in order. */
    Map<Object, List<Integer>> survivingWritesByKey() {
        Map<Integer, Integer> superseded = superseded();
        Map<Object, List<Integer>> surviving = new LinkedHashMap<>();
        writesByKey().forEach((key, writes) -> surviving.put(key,
            writes.stream().filter(i -> !superseded.containsKey(i)).toList()));
        return surviving;
    }

    @Override
    public String toString() {
        StringBuilder text = new StringBuilder("seed ").append(seed).append(ordered ? ", ordered" : ", unordered")
            .append("\n  initial: ").append(initial);
        for (int i = 0; i < ops.size(); i++) {
            text.append("\n  #").append(i).append(' ').append(ops.get(i));
        }
        return text.toString();
    }
}
