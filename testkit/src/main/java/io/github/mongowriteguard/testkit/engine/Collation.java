package io.github.mongowriteguard.testkit.engine;

import java.text.Normalizer;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import org.bson.BsonArray;
import org.bson.BsonBoolean;
import org.bson.BsonDocument;
import org.bson.BsonInt32;
import org.bson.BsonRegularExpression;
import org.bson.BsonString;
import org.bson.BsonValue;

/**
 * A collection's default collation, as far as the emulator can apply it; everything else about it is refused with a
 * message naming it, never ignored (the engine itself compares strings binary).
 *
 * <p>Parsed and reported as mongod's ICU collator reports it ({@code src/mongo/db/query/collation/collation_spec.h}
 * {@code CollationSpec::toBSON}, filled by {@code collator_factory_icu.cpp}): {@code locale}, {@code caseLevel},
 * {@code caseFirst}, {@code strength}, {@code numericOrdering}, {@code alternate}, {@code maxVariable},
 * {@code normalization}, {@code backwards}, {@code version} ("57.1", the ICU of the 4.4 to 8.0 servers); locale
 * {@code "simple"} is the binary comparison, so no collation is kept ({@code CollatorFactoryInterface}). Only locale
 * {@code "en"} is emulated (another locale's defaults differ and are not known here).
 *
 * <p>Applied ({@code src/mongo/db/query/collation/collator_interface_icu.cpp}: a collator compares strings, and only
 * strings, everywhere a query compares values) to the filters of {@code find}, {@code count}, {@code distinct},
 * {@code aggregate}'s {@code $match}, {@code update} and {@code delete} statements (and {@code arrayFilters}),
 * {@code findAndModify}, when the command or statement names no collation of its own:
 * <ul>
 *   <li>strength 1 or 2 with the other options at their defaults: a string equality ({@code {f: "x"}}, {@code $eq},
 *       {@code $ne}, {@code $in}, {@code $nin}) matches regardless of case (strength 1 also regardless of the accents
 *       of Latin letters), run as an anchored regular expression of each letter's variants;</li>
 *   <li>strength 3 to 5 with the other options at their defaults: equality is binary equality for
 *       precomposed text, so it runs as given;</li>
 *   <li>refused (an {@code InternalError} starting "emulator:"): a string in an ordering comparison ({@code $gt},
 *       {@code $gte}, {@code $lt}, {@code $lte}), a sort, {@code distinct} or {@code $group} over string values, an
 *       embedded document or array compared with strings in it, {@code $expr}, aggregation stages other than
 *       {@code $match}, {@code $project}, {@code $addFields}, {@code $set}, {@code $unset}, {@code $limit},
 *       {@code $skip}, {@code $count}, and any option other than strength (case level, case first, numeric
 *       ordering, alternate, backwards) in a comparison of strings: the collator's order is not binary order.</li>
 * </ul>
 */
final class Collation {
    static final String ICU_VERSION = "57.1";
    private static final Set<String> FIELDS = Set.of(
            "locale",
            "caseLevel",
            "caseFirst",
            "strength",
            "numericOrdering",
            "alternate",
            "maxVariable",
            "normalization",
            "backwards",
            "version");

    private final BsonDocument specification;
    private final int strength;
    /** Whether every option but strength is at its default (the only collations the emulator applies). */
    private final boolean plain;

    private Collation(BsonDocument specification) {
        this.specification = specification;
        this.strength = specification.getInt32("strength").getValue();
        this.plain = !specification.getBoolean("caseLevel").getValue()
                && specification.getString("caseFirst").getValue().equals("off")
                && !specification.getBoolean("numericOrdering").getValue()
                && specification.getString("alternate").getValue().equals("non-ignorable")
                && !specification.getBoolean("backwards").getValue();
    }

    /**
     * A {@code collation} option.
     *
     * @param value the option's value
     * @return the collation, or null for {@code locale: "simple"}
     * @throws CollectionOptions.EngineRefusal when the server or the emulator refuses it
     */
    static Collation parse(BsonValue value) {
        if (!value.isDocument()) {
            throw new CollectionOptions.EngineRefusal(2, "BadValue", "'collation' has to be a document.");
        }
        BsonDocument given = value.asDocument();
        if (given.isEmpty()) {
            throw new CollectionOptions.EngineRefusal(2, "BadValue", "'collation' cannot be an empty document.");
        }
        for (String field : given.keySet()) {
            if (!FIELDS.contains(field)) {
                throw new CollectionOptions.EngineRefusal(
                        40415, "Location40415", "BSON field 'collation." + field + "' is an unknown field.");
            }
        }
        BsonValue locale = given.get("locale");
        if (locale == null || !locale.isString()) {
            throw new CollectionOptions.EngineRefusal(
                    40414, "Location40414", "BSON field 'collation.locale' is missing but a required field");
        }
        if (locale.asString().getValue().equals("simple")) {
            return null;
        }
        if (!locale.asString().getValue().equals("en")) {
            throw CollectionOptions.unemulated(
                    "the collation of locale '" + locale.asString().getValue() + "' (it emulates 'simple' and 'en')");
        }
        BsonDocument specification = new BsonDocument("locale", new BsonString("en"))
                .append("caseLevel", bool(given, "caseLevel"))
                .append("caseFirst", choice(given, "caseFirst", "off", Set.of("off", "upper", "lower")))
                .append("strength", strength(given))
                .append("numericOrdering", bool(given, "numericOrdering"))
                .append("alternate", choice(given, "alternate", "non-ignorable", Set.of("non-ignorable", "shifted")))
                .append("maxVariable", choice(given, "maxVariable", "punct", Set.of("punct", "space")))
                .append("normalization", bool(given, "normalization"))
                .append("backwards", bool(given, "backwards"))
                .append("version", new BsonString(ICU_VERSION));
        return new Collation(specification);
    }

    private static BsonBoolean bool(BsonDocument given, String field) {
        BsonValue value = given.get(field);
        if (value == null) {
            return BsonBoolean.FALSE;
        }
        if (!value.isBoolean()) {
            throw new CollectionOptions.EngineRefusal(
                    14, "TypeMismatch", "Field '" + field + "' must be of type bool in: " + given.toJson());
        }
        return value.asBoolean();
    }

    private static BsonString choice(BsonDocument given, String field, String fallback, Set<String> allowed) {
        BsonValue value = given.get(field);
        if (value == null) {
            return new BsonString(fallback);
        }
        if (!value.isString() || !allowed.contains(value.asString().getValue())) {
            throw new CollectionOptions.EngineRefusal(
                    2, "BadValue", "Field '" + field + "' must be one of " + allowed + " in: " + given.toJson());
        }
        return value.asString();
    }

    private static BsonInt32 strength(BsonDocument given) {
        BsonValue value = given.get("strength");
        if (value == null) {
            return new BsonInt32(3);
        }
        if (!value.isNumber()
                || value.asNumber().doubleValue() != value.asNumber().intValue()) {
            throw new CollectionOptions.EngineRefusal(
                    14, "TypeMismatch", "Field 'strength' must be an integer in: " + given.toJson());
        }
        int strength = value.asNumber().intValue();
        if (strength < 1 || strength > 5) {
            throw new CollectionOptions.EngineRefusal(
                    2,
                    "BadValue",
                    "Field 'strength' must be an integer 1 through 5. Got: " + strength + " in: " + given.toJson());
        }
        return new BsonInt32(strength);
    }

    /** {@return the full specification, as {@code listCollections} reports it} */
    BsonDocument specification() {
        return specification.clone();
    }

    /** {@return whether strings equal under this collation may differ in their bytes (strength 1 or 2)} */
    boolean caseInsensitive() {
        return strength <= 2;
    }

    /** The emulator's refusal of what it cannot apply under a collection's default collation. */
    static CollectionOptions.EngineRefusal unemulated(String what) {
        return CollectionOptions.unemulated(what + " under a collection's default collation");
    }

    /**
     * A query filter as the engine's binary comparison can run it under this collation.
     *
     * @param filter the filter
     * @return the filter to run
     */
    BsonDocument filter(BsonDocument filter) {
        BsonDocument translated = new BsonDocument();
        for (String key : filter.keySet()) {
            BsonValue value = filter.get(key);
            switch (key) {
                case "$and", "$or", "$nor" -> {
                    BsonArray parts = new BsonArray();
                    for (BsonValue part : value.asArray()) {
                        parts.add(part.isDocument() ? filter(part.asDocument()) : part);
                    }
                    translated.put(key, parts);
                }
                case "$expr", "$where", "$function" -> throw unemulated(key);
                default -> translated.put(key, key.startsWith("$") ? value : condition(value));
            }
        }
        return translated;
    }

    /** A field's condition: a value to equal, or a document of operators. */
    private BsonValue condition(BsonValue condition) {
        if (condition.isString()) {
            return equality(condition.asString().getValue());
        }
        if (condition.isDocument()
                && !condition.asDocument().isEmpty()
                && condition.asDocument().getFirstKey().startsWith("$")) {
            return operators(condition.asDocument());
        }
        requireComparable(condition, "an equality with a document or array holding strings");
        return condition;
    }

    private BsonValue operators(BsonDocument operators) {
        BsonDocument translated = new BsonDocument();
        for (String operator : operators.keySet()) {
            BsonValue argument = operators.get(operator);
            switch (operator) {
                case "$eq" -> {
                    BsonValue equal =
                            argument.isString() ? equality(argument.asString().getValue()) : argument;
                    requireComparable(argument.isString() ? BsonBoolean.TRUE : argument, "$eq with a document");
                    if (equal.isRegularExpression()) {
                        put(translated, "$in", new BsonArray(List.of(equal)));
                    } else {
                        translated.put(operator, equal);
                    }
                }
                case "$ne" -> {
                    BsonValue equal =
                            argument.isString() ? equality(argument.asString().getValue()) : argument;
                    requireComparable(argument.isString() ? BsonBoolean.TRUE : argument, "$ne with a document");
                    if (equal.isRegularExpression()) {
                        put(translated, "$not", equal);
                    } else {
                        translated.put(operator, equal);
                    }
                }
                case "$in" -> put(translated, "$in", values(argument));
                case "$nin" -> {
                    if (caseInsensitive()) {
                        put(translated, "$not", new BsonDocument("$in", values(argument)));
                    } else {
                        translated.put(operator, values(argument));
                    }
                }
                case "$gt", "$gte", "$lt", "$lte", "$all", "$min", "$max" -> {
                    requireNoStrings(argument, "a string in " + operator + " (the collator's order is not binary)");
                    translated.put(operator, argument);
                }
                case "$elemMatch" ->
                    translated.put(
                            operator,
                            argument.isDocument()
                                            && !argument.asDocument().isEmpty()
                                            && argument.asDocument()
                                                    .getFirstKey()
                                                    .startsWith("$")
                                    ? operators(argument.asDocument())
                                    : filter(argument.asDocument()));
                case "$not" ->
                    translated.put(operator, argument.isDocument() ? operators(argument.asDocument()) : argument);
                case "$expr" -> throw unemulated(operator);
                default -> translated.put(operator, argument);
            }
        }
        return translated;
    }

    private static void put(BsonDocument translated, String operator, BsonValue value) {
        if (translated.containsKey(operator)) {
            throw unemulated("a condition combining " + operator + " with another string comparison");
        }
        translated.put(operator, value);
    }

    private BsonArray values(BsonValue argument) {
        if (!argument.isArray()) {
            return new BsonArray(List.of(argument)); // the server's error for a non-array comes from the engine
        }
        BsonArray values = new BsonArray();
        for (BsonValue value : argument.asArray()) {
            if (value.isString()) {
                values.add(caseInsensitive() ? equality(value.asString().getValue()) : value);
            } else {
                requireComparable(value, "$in or $nin with a document or array holding strings");
                values.add(value);
            }
        }
        return values;
    }

    /** A string to equal: itself at strength 3 and more, else an anchored expression of each character's variants. */
    private BsonValue equality(String text) {
        if (!caseInsensitive()) {
            requirePlain();
            return new BsonString(text);
        }
        requirePlain();
        StringBuilder pattern = new StringBuilder("^");
        text.codePoints().forEach(c -> pattern.append(variants(c)));
        return new BsonRegularExpression(pattern.append("\\z").toString());
    }

    private void requirePlain() {
        if (!plain) {
            throw unemulated(
                    "a string comparison with caseLevel, caseFirst, numericOrdering, alternate or backwards" + " set");
        }
    }

    /** The characters equal to {@code c} at this strength, as a character class (or {@code c} quoted). */
    private String variants(int c) {
        if (!Character.isLetter(c)) {
            if (c > 0x7f) {
                throw unemulated("a comparison of strings with non-ASCII characters other than letters");
            }
            return java.util.regex.Pattern.quote(new String(Character.toChars(c)));
        }
        String base = Normalizer.normalize(new String(Character.toChars(c)), Normalizer.Form.NFD);
        if (strength == 1 && base.codePointCount(0, base.length()) > 1) {
            c = base.codePointAt(0); // strength 1 ignores accents: compare the base letter
        } else if (c > 0x7f && strength == 1) {
            throw unemulated("a comparison of strings with letters outside Latin under strength 1");
        }
        StringBuilder letters = new StringBuilder();
        for (int candidate : candidates(c)) {
            letters.appendCodePoint(candidate);
        }
        return "[" + letters + "]";
    }

    /** {@code c} in both cases and, at strength 1, every Latin letter whose base letter it is. */
    private List<Integer> candidates(int c) {
        List<Integer> candidates = new ArrayList<>();
        int lower = Character.toLowerCase(c);
        int upper = Character.toUpperCase(c);
        candidates.add(lower);
        if (upper != lower) {
            candidates.add(upper);
        }
        if (strength == 1) {
            for (int other = 0xC0; other <= 0x24F; other++) {
                String decomposed = Normalizer.normalize(new String(Character.toChars(other)), Normalizer.Form.NFD);
                int base = decomposed.codePointAt(0);
                if (decomposed.length() > 1 && (base == lower || base == upper)) {
                    candidates.add(other);
                }
            }
        }
        return candidates;
    }

    /** Refuses an embedded document or array holding strings unless binary equality is this collation's equality. */
    private void requireComparable(BsonValue value, String what) {
        if (caseInsensitive() || !plain) {
            requireNoStrings(value, what);
        }
    }

    /** Refuses {@code value} when it holds a string (compared by the collator, which the engine cannot). */
    static void requireNoStrings(BsonValue value, String what) {
        if (holdsString(value)) {
            throw unemulated(what);
        }
    }

    static boolean holdsString(BsonValue value) {
        if (value.isString()) {
            return true;
        }
        if (value.isDocument()) {
            return value.asDocument().values().stream().anyMatch(Collation::holdsString);
        }
        if (value.isArray()) {
            return value.asArray().stream().anyMatch(Collation::holdsString);
        }
        return false;
    }
}
