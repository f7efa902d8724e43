package io.github.mongowriteguard;

import com.mongodb.client.model.BulkWriteOptions;
import com.mongodb.client.model.Collation;
import com.mongodb.client.model.DeleteManyModel;
import com.mongodb.client.model.DeleteOneModel;
import com.mongodb.client.model.DeleteOptions;
import com.mongodb.client.model.Filters;
import com.mongodb.client.model.InsertOneModel;
import com.mongodb.client.model.ReplaceOneModel;
import com.mongodb.client.model.ReplaceOptions;
import com.mongodb.client.model.UpdateManyModel;
import com.mongodb.client.model.UpdateOneModel;
import com.mongodb.client.model.UpdateOptions;
import com.mongodb.client.model.WriteModel;
import java.math.BigDecimal;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import org.bson.BsonArray;
import org.bson.BsonBoolean;
import org.bson.BsonDecimal128;
import org.bson.BsonDocument;
import org.bson.BsonDocumentReader;
import org.bson.BsonDouble;
import org.bson.BsonInt32;
import org.bson.BsonInt64;
import org.bson.BsonString;
import org.bson.BsonValue;
import org.bson.Document;
import org.bson.codecs.DecoderContext;
import org.bson.codecs.DocumentCodec;
import org.bson.conversions.Bson;
import org.bson.json.JsonMode;
import org.bson.json.JsonWriterSettings;
import org.bson.types.Decimal128;

/**
 * One random bulk for {@link DifferentialTest}, drawn from its seed alone: initial documents, writes, bulk options and
 * an optional {@code failCommand} fail point. Everything is kept as BSON and every {@link #models} call builds fresh,
 * independent {@link WriteModel}s (the guard and the driver both write {@code _id}s into insert documents).
 *
 * <p>Built to break the guard: {@code _id}s 0..5 only, so keys repeat, each drawn as int, long, double or Decimal128
 * (one key for the server and for the contract); duplicate inserts; inserts without {@code _id}; updates that fail
 * on the server ({@code $inc} on a string: 14; a replacement naming another {@code _id}: 66; array filters on a
 * document without the array: 2; a duplicate key: 11000) placed before and after deletes and replace-upserts of the
 * same key; update pipelines; filters with more conditions than {@code _id}, {@code {_id: {$eq: v}}} and
 * {@code Filters.eq}; unkeyed writes; collation, array filters, hints, per-model options the driver ignores in a bulk,
 * and the bulk's comment and bypassDocumentValidation.
 *
 * <p>Keys are computed here from CONTRACT.md, independently of the planner ({@link Op#key()}).
 *
 * <p>One server fact shapes the generator (checked with the raw driver): a command error fails every statement of its
 * command. The guard may put multi-document writes in commands of their own (CONTRACT.md, wire differences), so a
 * bulk that can get a command error on a command type (a fail point on it) has no multi-document write of that type:
 * otherwise the driver's and the guard's commands would legitimately fail different statements. Update pipelines
 * run as a server runs them (the emulator's engine layer), so they need no such care.
 */
final class DifferentialBulk {
    static final int KEYS = 6;
    static final JsonWriterSettings CANONICAL =
            JsonWriterSettings.builder().outputMode(JsonMode.EXTENDED).build();
    private static final DocumentCodec DOCUMENT_CODEC = new DocumentCodec();

    /** The four contract modes (CONTRACT.md, "The guard's contract per mode"). */
    enum Mode {
        /** ordered(false): rounds, each as the driver's unordered bulk. */
        UNORDERED,
        /** ordered, default settings, every write keyed: rounds, failures per key. */
        ORDERED_KEYED,
        /** ordered, default settings, at least one unkeyed write: the driver's ordered bulk. */
        ORDERED_UNKEYED,
        /** ordered with {@code strictOrdered(true)}: the driver's ordered bulk. */
        STRICT_ORDERED
    }

    enum Kind {
        INSERT,
        INSERT_WITHOUT_ID,
        REPLACE_ONE,
        UPDATE_ONE,
        UPDATE_MANY,
        DELETE_ONE,
        DELETE_MANY
    }

    /** How a filter or update reaches the guard: the caller may pass any {@link Bson}. */
    enum Style {
        DOCUMENT,
        BSON_DOCUMENT,
        FILTERS_EQ
    }

    /**
     * A {@code failCommand} fail point with {@code {times: 1}}: the first command of that name fails with a command
     * error. Set freshly before each side's run and turned off after it. Not {@code {skip: n}}: which statements the
     * n-th command holds depends on how commands are split, which may differ (CONTRACT.md); the first command of a
     * name starts at the same statement on both sides, and the call stops there.
     */
    record FailPoint(String command, int errorCode) {
        org.bson.Document configure() {
            return new org.bson.Document("configureFailPoint", "failCommand")
                    .append("mode", new org.bson.Document("times", 1))
                    .append(
                            "data",
                            new org.bson.Document("failCommands", List.of(command)).append("errorCode", errorCode));
        }

        @Override
        public String toString() {
            return "failCommand {times: 1} on " + command + " errorCode " + errorCode;
        }
    }

    /** One write, as BSON. */
    static final class Op {
        final Kind kind;
        final BsonDocument filter;
        final Style style;
        /** The insert document, the replacement or the update document; null for deletes and pipelines. */
        final BsonDocument document;

        final List<BsonDocument> pipeline;
        final boolean upsert;
        final Collation collation;
        final List<BsonDocument> arrayFilters;
        /** A {@link BsonDocument} hint or a {@link BsonString} index name; null for none. */
        final BsonValue hint;
        /** Per-model comment, bypassDocumentValidation and let, which the driver ignores in a bulk. */
        final boolean ignoredOptions;
        /** For an insert without {@code _id}: the id the guard gave it, read back after the guard's run. */
        BsonValue assignedId;
        /** The position in the bulk, for the key of an insert whose id is not known yet. */
        int position;

        private Op(
                Kind kind,
                BsonDocument filter,
                Style style,
                BsonDocument document,
                List<BsonDocument> pipeline,
                boolean upsert,
                Collation collation,
                List<BsonDocument> arrayFilters,
                BsonValue hint,
                boolean ignoredOptions) {
            this.kind = kind;
            this.filter = filter;
            this.style = style;
            this.document = document;
            this.pipeline = pipeline;
            this.upsert = upsert;
            this.collation = collation;
            this.arrayFilters = arrayFilters;
            this.hint = hint;
            this.ignoredOptions = ignoredOptions;
        }

        static Op insert(BsonDocument document) {
            return new Op(
                    document.containsKey("_id") ? Kind.INSERT : Kind.INSERT_WITHOUT_ID,
                    null,
                    Style.DOCUMENT,
                    document,
                    null,
                    false,
                    null,
                    null,
                    null,
                    false);
        }

        static Op write(
                Kind kind,
                BsonDocument filter,
                Style style,
                BsonDocument document,
                List<BsonDocument> pipeline,
                boolean upsert,
                Collation collation,
                List<BsonDocument> arrayFilters,
                BsonValue hint,
                boolean ignored) {
            return new Op(kind, filter, style, document, pipeline, upsert, collation, arrayFilters, hint, ignored);
        }

        /**
         * The key of this write by CONTRACT.md, or null when unkeyed: an insert is keyed by its {@code _id} (one the
         * guard assigned when it had none); a single-document write by its filter's {@code _id} equality
         * ({@code {_id: v}} or {@code {_id: {$eq: v}}}, other fields allowed) unless its collation is not simple;
         * updateMany and deleteMany never. Numbers compare by value.
         */
        String key() {
            switch (kind) {
                case INSERT:
                    return keyOf(document.get("_id"));
                case INSERT_WITHOUT_ID:
                    return assignedId == null ? "new id #" + position : keyOf(assignedId);
                default:
                    // updateMany and deleteMany too: a filter that pins _id matches at most one document, so the
                    // guard keys it and sends it as a single-document statement.
                    if (collation != null && !"simple".equals(collation.getLocale())) {
                        return null;
                    }
                    BsonValue id = filter.get("_id");
                    if (id == null) {
                        return null;
                    }
                    if (id.isDocument()) {
                        BsonDocument operator = id.asDocument();
                        return operator.size() == 1 && operator.containsKey("$eq") ? keyOf(operator.get("$eq")) : null;
                    }
                    return id.isArray() || id.isRegularExpression() ? null : keyOf(id);
            }
        }

        boolean isMulti() {
            return kind == Kind.UPDATE_MANY || kind == Kind.DELETE_MANY;
        }

        /** The model as the guard sends it: a keyed updateMany/deleteMany as an updateOne/deleteOne. */
        WriteModel<Document> buildAsSent() {
            if (!isMulti() || key() == null) {
                return build(true);
            }
            Kind single = kind == Kind.UPDATE_MANY ? Kind.UPDATE_ONE : Kind.DELETE_ONE;
            Op asSent = new Op(
                    single, filter, style, document, pipeline, upsert, collation, arrayFilters, hint, ignoredOptions);
            asSent.position = position;
            return asSent.build(true);
        }

        WriteModel<Document> build(boolean withAssignedId) {
            switch (kind) {
                case INSERT:
                    return new InsertOneModel<>(document(document));
                case INSERT_WITHOUT_ID: {
                    Document body = document(document);
                    if (withAssignedId && assignedId != null) {
                        Document withId = new Document("_id", javaValue(assignedId));
                        withId.putAll(body);
                        body = withId;
                    }
                    return new InsertOneModel<>(body);
                }
                case REPLACE_ONE: {
                    ReplaceOptions options = new ReplaceOptions().upsert(upsert).collation(collation);
                    if (hint != null) {
                        options = hint.isString()
                                ? options.hintString(hint.asString().getValue())
                                : options.hint(hint.asDocument());
                    }
                    if (ignoredOptions) {
                        options.comment("per-model comment")
                                .bypassDocumentValidation(true)
                                .let(new BsonDocument("x", new BsonInt32(1)));
                    }
                    return new ReplaceOneModel<>(filter(), document(document), options);
                }
                case UPDATE_ONE:
                case UPDATE_MANY: {
                    UpdateOptions options = new UpdateOptions()
                            .upsert(upsert)
                            .collation(collation)
                            .arrayFilters(arrayFilters);
                    if (hint != null) {
                        options = hint.isString()
                                ? options.hintString(hint.asString().getValue())
                                : options.hint(hint.asDocument());
                    }
                    if (ignoredOptions) {
                        options.comment("per-model comment")
                                .bypassDocumentValidation(true)
                                .let(new BsonDocument("x", new BsonInt32(1)));
                    }
                    if (pipeline != null) {
                        List<Bson> stages = new ArrayList<>();
                        pipeline.forEach(
                                stage -> stages.add(style == Style.DOCUMENT ? document(stage) : stage.clone()));
                        return kind == Kind.UPDATE_ONE
                                ? new UpdateOneModel<>(filter(), stages, options)
                                : new UpdateManyModel<>(filter(), stages, options);
                    }
                    Bson update = style == Style.DOCUMENT ? document(document) : document.clone();
                    return kind == Kind.UPDATE_ONE
                            ? new UpdateOneModel<>(filter(), update, options)
                            : new UpdateManyModel<>(filter(), update, options);
                }
                case DELETE_ONE:
                case DELETE_MANY: {
                    DeleteOptions options = new DeleteOptions().collation(collation);
                    if (hint != null) {
                        options = hint.isString()
                                ? options.hintString(hint.asString().getValue())
                                : options.hint(hint.asDocument());
                    }
                    if (ignoredOptions) {
                        options.comment("per-model comment").let(new BsonDocument("x", new BsonInt32(1)));
                    }
                    return kind == Kind.DELETE_ONE
                            ? new DeleteOneModel<>(filter(), options)
                            : new DeleteManyModel<>(filter(), options);
                }
                default:
                    throw new AssertionError(kind);
            }
        }

        private Bson filter() {
            switch (style) {
                case DOCUMENT:
                    return document(filter);
                case FILTERS_EQ:
                    return Filters.eq("_id", filter.get("_id"));
                default:
                    return filter.clone();
            }
        }

        @Override
        public String toString() {
            StringBuilder text = new StringBuilder(kind.name());
            if (filter != null) {
                text.append(' ').append(filter.toJson(CANONICAL)).append(style == Style.DOCUMENT ? "" : " as " + style);
            }
            if (document != null) {
                text.append(' ').append(document.toJson(CANONICAL));
            }
            if (pipeline != null) {
                text.append(" pipeline ").append(new BsonArray(pipeline).toString());
            }
            if (upsert) {
                text.append(" upsert");
            }
            if (collation != null) {
                text.append(" collation ").append(collation.getLocale());
            }
            if (arrayFilters != null) {
                text.append(" arrayFilters ").append(new BsonArray(arrayFilters).toString());
            }
            if (hint != null) {
                text.append(" hint ").append(hint);
            }
            if (ignoredOptions) {
                text.append(" (per-model comment/bypass/let)");
            }
            if (assignedId != null) {
                text.append(" (guard's id ").append(assignedId).append(')');
            }
            String key = key();
            text.append(key == null ? "  [unkeyed]" : "  [key " + key + "]");
            return text.toString();
        }
    }

    final long seed;
    final Mode mode;
    final boolean ordered;
    final List<BsonDocument> initial;
    final List<Op> ops;
    final BsonValue comment;
    final Boolean bypassDocumentValidation;
    final FailPoint failPoint;

    private DifferentialBulk(
            long seed,
            Mode mode,
            List<BsonDocument> initial,
            List<Op> ops,
            BsonValue comment,
            Boolean bypassDocumentValidation,
            FailPoint failPoint) {
        this.seed = seed;
        this.mode = mode;
        this.ordered = mode != Mode.UNORDERED;
        this.initial = initial;
        this.ops = ops;
        this.comment = comment;
        this.bypassDocumentValidation = bypassDocumentValidation;
        this.failPoint = failPoint;
        for (int i = 0; i < ops.size(); i++) {
            ops.get(i).position = i;
        }
    }

    /**
     * This bulk without its fail point: for a guard that sends a round's per-shard commands side by side, where a
     * {@code times: 1} fail point on mongos fails whichever command reaches it first, which no oracle can name.
     */
    DifferentialBulk withoutFailPoint() {
        return failPoint == null
                ? this
                : new DifferentialBulk(seed, mode, initial, ops, comment, bypassDocumentValidation, null);
    }

    /**
     * The bulk of {@code seed} for {@code mode}: the same seed, mode and deployment give the same bulk.
     */
    static DifferentialBulk generate(long seed, Mode mode, boolean sharded) {
        return new Generator(new Random(seed), mode, true).bulk(seed);
    }

    /**
     * A hot-key bulk of {@code seed} for {@code mode} (UNORDERED or ORDERED_KEYED): long runs of one type on one or two
     * keys, interleaved, as a consumer of a compacted topic sees them, with failures inside runs (an {@code $inc} after
     * a {@code $set} of a string: 14; a second insert of a key: 11000; a replacement naming another {@code _id}: 66),
     * a few writes on other keys, and sometimes a {@code failCommand} fail point. Every write keyed.
     */
    static DifferentialBulk generateHotKeys(long seed, Mode mode) {
        return new Generator(new Random(seed), mode, false).hotBulk(seed, 1, 2);
    }

    /**
     * As {@link #generateHotKeys}, with three to {@link #KEYS} hot keys: an ordered request's key runs of several keys
     * share ORDERED commands (grouped by shard on a sharded cluster), a failure inside one run stops its key and the
     * other keys' runs after it are sent again.
     */
    static DifferentialBulk generateManyHotKeys(long seed, Mode mode) {
        return new Generator(new Random(seed), mode, false).hotBulk(seed, 3, KEYS);
    }

    /** Fresh models; with {@code withAssignedIds}, inserts without {@code _id} carry the id the guard gave them. */
    List<WriteModel<Document>> models(boolean withAssignedIds) {
        List<WriteModel<Document>> models = new ArrayList<>(ops.size());
        ops.forEach(op -> models.add(op.build(withAssignedIds)));
        return models;
    }

    /**
     * The models as the guard sends them (README, differences table): an updateMany or deleteMany whose filter pins
     * {@code _id} (keyed by CONTRACT.md) as the driver's updateOne / deleteOne with the same filter and options, so its
     * statement is the driver's {@code multi: false} / {@code limit: 1} one.
     */
    List<WriteModel<Document>> modelsAsSent() {
        List<WriteModel<Document>> models = new ArrayList<>(ops.size());
        ops.forEach(op -> models.add(op.buildAsSent()));
        return models;
    }

    BulkWriteOptions options() {
        BulkWriteOptions options =
                new BulkWriteOptions().ordered(ordered).bypassDocumentValidation(bypassDocumentValidation);
        return comment == null ? options : options.comment(comment);
    }

    boolean hasPipeline() {
        return ops.stream().anyMatch(op -> op.pipeline != null);
    }

    boolean allKeyed() {
        return ops.stream().allMatch(op -> op.key() != null);
    }

    /** The caller's indices of each key's writes, keys in order of first appearance; unkeyed writes are not in it. */
    Map<String, List<Integer>> writesByKey() {
        Map<String, List<Integer>> byKey = new LinkedHashMap<>();
        for (int i = 0; i < ops.size(); i++) {
            String key = ops.get(i).key();
            if (key != null) {
                byKey.computeIfAbsent(key, k -> new ArrayList<>()).add(i);
            }
        }
        return byKey;
    }

    boolean hasRepeatedKey() {
        return writesByKey().values().stream().anyMatch(writes -> writes.size() > 1);
    }

    @Override
    public String toString() {
        StringBuilder text = new StringBuilder("seed ")
                .append(seed)
                .append(", ")
                .append(mode)
                .append(ordered ? " (ordered)" : " (unordered)");
        if (comment != null) {
            text.append(", comment ").append(comment);
        }
        if (bypassDocumentValidation != null) {
            text.append(", bypassDocumentValidation ").append(bypassDocumentValidation);
        }
        if (failPoint != null) {
            text.append(", ").append(failPoint);
        }
        text.append("\n  initial:");
        initial.forEach(d -> text.append(' ').append(d.toJson(CANONICAL)));
        for (int i = 0; i < ops.size(); i++) {
            text.append("\n  #").append(i).append(' ').append(ops.get(i));
        }
        return text.toString();
    }

    /** Numbers by value (1 == 1L == 1.0 == Decimal128 1), as the server's {@code _id} index compares them. */
    static String keyOf(BsonValue id) {
        if (id == null) {
            return "missing";
        }
        if (id.isNumber() || id.isDecimal128()) {
            BigDecimal value;
            if (id.isInt32()) {
                value = BigDecimal.valueOf(id.asInt32().getValue());
            } else if (id.isInt64()) {
                value = BigDecimal.valueOf(id.asInt64().getValue());
            } else if (id.isDouble()) {
                value = new BigDecimal(id.asDouble().getValue());
            } else {
                value = id.asDecimal128().getValue().bigDecimalValue();
            }
            return "number "
                    + (value.signum() == 0 ? "0" : value.stripTrailingZeros().toPlainString());
        }
        if (id.isObjectId()) {
            return "oid " + id.asObjectId().getValue().toHexString();
        }
        return id.getBsonType() + " " + id;
    }

    static Document document(BsonDocument bson) {
        return DOCUMENT_CODEC.decode(
                new BsonDocumentReader(bson), DecoderContext.builder().build());
    }

    private static Object javaValue(BsonValue value) {
        return document(new BsonDocument("v", value)).get("v");
    }

    /** Draws one bulk. */
    private static final class Generator {
        private final Random random;
        private final Mode mode;
        private final boolean mayUnkey;
        private FailPoint failPoint;
        private boolean noUpdateMany;
        private boolean noDeleteMany;
        private boolean pipelines;
        private int hotKey;
        private int replacements;
        /** Set by {@link #unkeyedFilter} for an {@code _id} equality made unkeyed by a non-simple collation. */
        private boolean collationEn;

        private final boolean pipelinesAllowed;

        Generator(Random random, Mode mode, boolean pipelinesAllowed) {
            this.random = random;
            this.mode = mode;
            this.pipelinesAllowed = pipelinesAllowed;
            // ORDERED_KEYED must stay all keyed; STRICT_ORDERED mixes both like the driver's users do.
            this.mayUnkey = mode == Mode.UNORDERED
                    || mode == Mode.ORDERED_UNKEYED
                    || mode == Mode.STRICT_ORDERED && random.nextBoolean();
        }

        DifferentialBulk bulk(long seed) {
            List<BsonDocument> initial = new ArrayList<>();
            for (int k = 0; k < KEYS; k++) {
                if (random.nextInt(10) < 6) {
                    BsonDocument document =
                            new BsonDocument("_id", id(k)).append("n", value()).append("tag", new BsonString(tag()));
                    if (random.nextInt(3) == 0) {
                        document.append("arr", array());
                    }
                    initial.add(document);
                }
            }
            if (random.nextInt(6) == 0) {
                String command = random.nextBoolean() ? "update" : "delete";
                failPoint = new FailPoint(command, random.nextBoolean() ? 2 : 121);
                noUpdateMany = command.equals("update");
                noDeleteMany = command.equals("delete");
            }
            if (random.nextInt(12) == 0 && pipelinesAllowed) {
                pipelines = true;
            }
            hotKey = random.nextInt(KEYS);
            int size = random.nextInt(8) == 0 ? 10 + random.nextInt(15) : 1 + random.nextInt(10);
            List<Op> ops = new ArrayList<>(size + 4);
            for (int i = 0; i < size; i++) {
                ops.add(op());
            }
            if (random.nextInt(3) == 0) {
                List<Op> template = template();
                int at = random.nextInt(ops.size() + 1);
                for (Op op : template) {
                    ops.add(at, op);
                    at += 1 + (random.nextBoolean() ? 0 : random.nextInt(2));
                    at = Math.min(at, ops.size());
                }
            }
            if (mode == Mode.ORDERED_UNKEYED && ops.stream().allMatch(op -> op.key() != null)) {
                ops.set(random.nextInt(ops.size()), unkeyedSingle());
            }
            BsonValue comment = switch (random.nextInt(6)) {
                case 0, 1 -> new BsonString("caller comment " + random.nextInt(100));
                case 2 ->
                    new BsonDocument("caller", new BsonString("x")).append("n", new BsonInt32(random.nextInt(10)));
                default -> null;
            };
            Boolean bypass = switch (random.nextInt(6)) {
                case 0 -> Boolean.TRUE;
                case 1 -> Boolean.FALSE;
                default -> null;
            };
            return new DifferentialBulk(seed, mode, List.copyOf(initial), ops, comment, bypass, failPoint);
        }

        /** See {@link DifferentialBulk#generateHotKeys}. */
        DifferentialBulk hotBulk(long seed, int fewestHotKeys, int mostHotKeys) {
            List<BsonDocument> initial = new ArrayList<>();
            for (int k = 0; k < KEYS; k++) {
                if (random.nextInt(10) < 6) {
                    initial.add(new BsonDocument("_id", id(k)).append("n", new BsonInt32(random.nextInt(5))));
                }
            }
            if (random.nextInt(5) == 0) {
                String command = random.nextBoolean() ? "update" : "delete";
                failPoint = new FailPoint(command, random.nextBoolean() ? 2 : 121);
                noUpdateMany = command.equals("update");
                noDeleteMany = command.equals("delete");
            }
            int hotKeys = fewestHotKeys + random.nextInt(mostHotKeys - fewestHotKeys + 1);
            int[] current =
                    new int[hotKeys]; // each hot key's current kind of write: 0 $inc, 1 replace, 2 delete, 3 insert
            for (int h = 0; h < hotKeys; h++) {
                current[h] = random.nextInt(10) < 7 ? 0 : random.nextInt(4);
            }
            int size = 10 + random.nextInt(50);
            List<Op> ops = new ArrayList<>(size);
            for (int i = 0; i < size; i++) {
                if (random.nextInt(10) == 0) {
                    ops.add(op()); // a write on any key
                    continue;
                }
                int h = random.nextInt(hotKeys);
                int k = h; // hot keys are 0, 1, ...
                if (random.nextInt(12) == 0) {
                    current[h] = random.nextInt(4); // the run of this kind ends
                }
                BsonDocument inc = new BsonDocument("$inc", new BsonDocument("n", new BsonInt32(1)));
                switch (current[h]) {
                    case 0:
                        if (random.nextInt(15) == 0) { // makes the key's later $inc fail (14)
                            ops.add(update(
                                    Kind.UPDATE_ONE,
                                    keyedFilter(k),
                                    new BsonDocument("$set", new BsonDocument("n", new BsonString("s"))),
                                    random.nextBoolean()));
                        } else {
                            ops.add(update(
                                    Kind.UPDATE_ONE, new BsonDocument("_id", id(k)), inc, random.nextInt(3) > 0));
                        }
                        break;
                    case 1:
                        ops.add(replace(keyedFilter(k), replacement(k), random.nextInt(3) > 0));
                        break;
                    case 2:
                        ops.add(delete(new BsonDocument("_id", id(k))));
                        break;
                    default:
                        ops.add(Op.insert(
                                new BsonDocument("_id", id(k)).append("n", new BsonInt32(random.nextInt(5)))));
                        break;
                }
            }
            return new DifferentialBulk(seed, mode, List.copyOf(initial), ops, null, null, failPoint);
        }

        /**
         * Sequences on one key that the old planner superseded or refused: a failing update before and after a
         * delete or replace-upsert of its key, a failing update as the key's last write, inserts of one key
         * in several numeric types.
         */
        private List<Op> template() {
            int k = random.nextInt(KEYS);
            BsonDocument incN = new BsonDocument("$inc", new BsonDocument("n", new BsonInt32(1 + random.nextInt(3))));
            BsonDocument setString =
                    new BsonDocument("$set", new BsonDocument("n", new BsonString("s" + random.nextInt(3))));
            List<Op> ops = new ArrayList<>();
            switch (random.nextInt(5)) {
                case 0: // the failure used to be hidden by the later delete or replace-upsert
                    ops.add(update(Kind.UPDATE_ONE, keyedFilter(k), setString, true));
                    ops.add(update(Kind.UPDATE_ONE, keyedFilter(k), incN, false));
                    ops.add(
                            random.nextBoolean()
                                    ? delete(keyedFilter(k))
                                    : replace(keyedFilter(k), replacement(k), true));
                    break;
                case 1: // the superseding write first, the failing update last
                    ops.add(replace(
                            keyedFilter(k),
                            new BsonDocument("n", new BsonString("s1")).append("r", new BsonInt32(replacements++)),
                            true));
                    ops.add(update(Kind.UPDATE_ONE, keyedFilter(k), incN, random.nextBoolean()));
                    break;
                case 2: // one key, inserted in several numeric types, maybe deleted between
                    ops.add(Op.insert(insertDocument(k)));
                    ops.add(Op.insert(insertDocument(k)));
                    if (random.nextBoolean()) {
                        ops.add(delete(keyedFilter(k)));
                        ops.add(Op.insert(insertDocument(k)));
                    }
                    break;
                case 3: // a duplicate insert hidden by a later replace-upsert or delete
                    ops.add(Op.insert(insertDocument(k)));
                    ops.add(
                            random.nextBoolean()
                                    ? delete(keyedFilter(k))
                                    : replace(keyedFilter(k), replacement(k), true));
                    if (random.nextBoolean()) {
                        ops.add(update(Kind.UPDATE_ONE, keyedFilter(k), setString, false));
                        ops.add(update(Kind.UPDATE_ONE, keyedFilter(k), incN, false));
                    }
                    break;
                default: // delete, then a failing upsert, then a replace-upsert
                    ops.add(delete(keyedFilter(k)));
                    ops.add(update(Kind.UPDATE_ONE, keyedFilter(k).append("n", new BsonString("s0")), incN, true));
                    ops.add(replace(keyedFilter(k), replacement(k), true));
                    break;
            }
            return ops;
        }

        private Op op() {
            int k = random.nextInt(2) == 0 ? hotKey : random.nextInt(KEYS);
            int choice = random.nextInt(100);
            if (choice < 14) {
                return Op.insert(insertDocument(k));
            }
            if (choice < 20) {
                return Op.insert(new BsonDocument("n", value()).append("tag", new BsonString(tag())));
            }
            if (choice < 36) {
                return replace(filter(k), replacement(k), random.nextInt(5) < 2);
            }
            if (choice < 66) {
                return update(Kind.UPDATE_ONE, filter(k), null, random.nextInt(10) < 3);
            }
            if (choice < 80) {
                return delete(filter(k));
            }
            if (choice < 87 && !noUpdateMany) {
                // updateMany/deleteMany pinning _id (keyed) in every mode; the unkeyed ones where the mode allows
                return update(Kind.UPDATE_MANY, keyedFilter(k), null, random.nextInt(4) == 0);
            }
            if (choice < 92 && !noDeleteMany) {
                return write(Kind.DELETE_MANY, keyedFilter(k), null, false);
            }
            if (mayUnkey && choice < 96 && !noUpdateMany) {
                BsonDocument filter = switch (random.nextInt(4)) {
                    case 0 -> new BsonDocument("_id", new BsonDocument("$in", new BsonArray(List.of(id(k)))));
                    case 1 -> new BsonDocument("n", new BsonDocument("$gt", new BsonInt32(50)));
                    default -> new BsonDocument("tag", new BsonString(tag()));
                };
                return update(Kind.UPDATE_MANY, filter, null, random.nextInt(8) == 0);
            }
            if (mayUnkey && !noDeleteMany) {
                BsonDocument filter = switch (random.nextInt(3)) {
                    case 0 -> new BsonDocument("n", new BsonDocument("$gt", new BsonInt32(70)));
                    default -> new BsonDocument("tag", new BsonString(tag()));
                };
                return write(Kind.DELETE_MANY, filter, null, false);
            }
            return update(Kind.UPDATE_ONE, filter(k), null, random.nextInt(10) < 3);
        }

        /** A single-document write that is not keyed: a non-_id filter, _id $in, or a non-simple collation. */
        private Op unkeyedSingle() {
            BsonDocument filter = unkeyedFilter(random.nextInt(KEYS));
            return random.nextBoolean()
                    ? update(Kind.UPDATE_ONE, filter, null, random.nextInt(4) == 0)
                    : delete(filter);
        }

        private Op replace(BsonDocument filter, BsonDocument replacement, boolean upsert) {
            return write(Kind.REPLACE_ONE, filter, replacement, upsert);
        }

        private Op delete(BsonDocument filter) {
            return write(Kind.DELETE_ONE, filter, null, false);
        }

        /** An update; {@code body} null draws one (pipelines and array filters included). */
        private Op update(Kind kind, BsonDocument filter, BsonDocument body, boolean upsert) {
            if (body == null && pipelines && kind == Kind.UPDATE_ONE && random.nextInt(3) == 0) {
                List<BsonDocument> pipeline = random.nextBoolean()
                        ? List.of(new BsonDocument("$set", new BsonDocument("p", new BsonInt32(random.nextInt(5)))))
                        : List.of(
                                new BsonDocument(
                                        "$set",
                                        new BsonDocument(
                                                "n",
                                                new BsonDocument(
                                                        "$add",
                                                        new BsonArray(
                                                                List.of(new BsonString("$n"), new BsonInt32(1)))))),
                                new BsonDocument("$unset", new BsonString("tag")));
                Op drawn = write(kind, filter, null, upsert, null);
                return Op.write(
                        kind,
                        drawn.filter,
                        drawn.style,
                        null,
                        pipeline,
                        upsert,
                        drawn.collation,
                        null,
                        drawn.hint,
                        drawn.ignoredOptions);
            }
            List<BsonDocument> arrayFilters = null;
            if (body == null) {
                switch (random.nextInt(9)) {
                    case 0:
                    case 1:
                        body = new BsonDocument("$set", new BsonDocument("n", value()));
                        break;
                    case 2:
                    case 3:
                        body = new BsonDocument(
                                "$inc", new BsonDocument("n", number(1 + random.nextInt(4)))); // 14 on a string
                        break;
                    case 4:
                        body = new BsonDocument("$unset", new BsonDocument("tag", new BsonString("")));
                        break;
                    case 5:
                        body = new BsonDocument("$set", new BsonDocument("tag", new BsonString(tag())))
                                .append("$inc", new BsonDocument("u", new BsonInt32(1)));
                        break;
                    case 6:
                        body = new BsonDocument("$push", new BsonDocument("arr", new BsonInt32(random.nextInt(6))));
                        break;
                    default: // 2 (the path must exist) on a document without arr
                        body = new BsonDocument(
                                "$set", new BsonDocument("arr.$[e]", new BsonInt32(random.nextInt(10))));
                        arrayFilters = List.of(
                                new BsonDocument("e", new BsonDocument("$gte", new BsonInt32(random.nextInt(6)))));
                        break;
                }
            }
            Op drawn = write(kind, filter, body, upsert, null);
            return arrayFilters == null
                    ? drawn
                    : Op.write(
                            kind,
                            drawn.filter,
                            drawn.style,
                            body,
                            null,
                            upsert,
                            drawn.collation,
                            arrayFilters,
                            drawn.hint,
                            drawn.ignoredOptions);
        }

        private Op write(Kind kind, BsonDocument filter, BsonDocument body, boolean upsert) {
            return write(kind, filter, body, upsert, null);
        }

        /** A write with drawn options: style, simple collation, hint, per-model options; {@code collation} forces one. */
        private Op write(Kind kind, BsonDocument filter, BsonDocument body, boolean upsert, Collation collation) {
            boolean pureId = filter.size() == 1
                    && filter.containsKey("_id")
                    && !filter.get("_id").isDocument();
            Style style = switch (random.nextInt(pureId ? 4 : 3)) {
                case 0 -> Style.BSON_DOCUMENT;
                case 3 -> Style.FILTERS_EQ;
                default -> Style.DOCUMENT;
            };
            if (collationEn) {
                collationEn = false;
                collation = Collation.builder().locale("en").build();
            } else if (collation == null && random.nextInt(8) == 0) {
                collation = Collation.builder().locale("simple").build();
            }
            BsonValue hint = switch (random.nextInt(12)) {
                case 0 -> new BsonDocument("_id", new BsonInt32(1));
                case 1 -> new BsonString("_id_");
                default -> null;
            };
            return Op.write(kind, filter, style, body, null, upsert, collation, null, hint, random.nextInt(10) == 0);
        }

        /** Keyed mostly; unkeyed (when the mode allows) one time in five. */
        private BsonDocument filter(int k) {
            if (mayUnkey && random.nextInt(5) == 0) {
                return unkeyedFilter(k);
            }
            return keyedFilter(k);
        }

        private BsonDocument keyedFilter(int k) {
            BsonValue id = id(k);
            switch (random.nextInt(10)) {
                case 0:
                case 1:
                    return new BsonDocument("_id", new BsonDocument("$eq", id));
                case 2:
                    return new BsonDocument("_id", id).append("tag", new BsonString(tag()));
                case 3:
                    return new BsonDocument("tag", new BsonString(tag())).append("_id", id);
                case 4:
                    return new BsonDocument("_id", new BsonDocument("$eq", id))
                            .append("n", new BsonDocument("$exists", BsonBoolean.TRUE));
                default:
                    return new BsonDocument("_id", id);
            }
        }

        private BsonDocument unkeyedFilter(int k) {
            switch (random.nextInt(5)) {
                case 0:
                    return new BsonDocument("tag", new BsonString(tag()));
                case 1:
                    return new BsonDocument("n", new BsonDocument("$gt", new BsonInt32(50)));
                case 2:
                    collationEn = true; // the next write() gives it {locale: "en"}
                    return new BsonDocument("_id", id(k));
                default:
                    return new BsonDocument("_id", new BsonDocument("$in", new BsonArray(List.of(id(k)))));
            }
        }

        private BsonDocument insertDocument(int k) {
            BsonDocument document =
                    new BsonDocument("_id", id(k)).append("n", value()).append("tag", new BsonString(tag()));
            if (random.nextInt(3) == 0) {
                document.append("arr", array());
            }
            return document;
        }

        /** Mostly without _id; sometimes the same key in another numeric type; sometimes another key (66). */
        private BsonDocument replacement(int k) {
            BsonDocument replacement = new BsonDocument();
            int withId = random.nextInt(12);
            if (withId < 3) {
                replacement.append("_id", id(k));
            } else if (withId == 3) {
                replacement.append("_id", id((k + 1 + random.nextInt(KEYS - 1)) % KEYS));
            }
            replacement
                    .append("n", value())
                    .append("tag", new BsonString(tag()))
                    .append("r", new BsonInt32(replacements++));
            if (random.nextInt(4) == 0) {
                replacement.append("arr", array());
            }
            return replacement;
        }

        /** The number k as int, long, double or Decimal128: one key for the server and the contract. */
        private BsonValue id(int k) {
            return number(k);
        }

        private BsonValue number(int k) {
            switch (random.nextInt(5)) {
                case 0:
                    return new BsonInt64(k);
                case 1:
                    return new BsonDouble(k);
                case 2:
                    return new BsonDecimal128(new Decimal128(k));
                default:
                    return new BsonInt32(k);
            }
        }

        /** Mostly a number of some type; sometimes a string, on which {@code $inc} fails (14). */
        private BsonValue value() {
            int choice = random.nextInt(20);
            if (choice < 3) {
                return new BsonString("s" + random.nextInt(3));
            }
            if (choice < 5) {
                return new BsonInt64(random.nextInt(100));
            }
            if (choice < 7) {
                return new BsonDouble(random.nextInt(100) + 0.5);
            }
            return new BsonInt32(random.nextInt(100));
        }

        private BsonArray array() {
            BsonArray array = new BsonArray();
            for (int i = random.nextInt(4); i > 0; i--) {
                array.add(new BsonInt32(random.nextInt(6)));
            }
            return array;
        }

        private String tag() {
            return String.valueOf((char) ('a' + random.nextInt(3)));
        }
    }
}
