package io.github.mongowriteguard.testkit.engine;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.function.UnaryOperator;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.regex.PatternSyntaxException;
import org.bson.BsonArray;
import org.bson.BsonBoolean;
import org.bson.BsonDocument;
import org.bson.BsonDouble;
import org.bson.BsonInt32;
import org.bson.BsonInt64;
import org.bson.BsonNull;
import org.bson.BsonString;
import org.bson.BsonValue;

/**
 * {@code $regexFind}, {@code $regexFindAll} and {@code $regexMatch} in aggregation expressions (4.2+), which
 * mongo-java-server's closed set of expressions lacks, as mongod evaluates them
 * (4.4 {@code src/mongo/db/pipeline/expression.cpp}, {@code ExpressionRegex}; newest
 * {@code src/mongo/db/exec/expression/evaluate_regex.cpp}, {@code RegexExecutionState}, {@code nextMatch}):
 * {@code {input, regex, options}}; a null or missing input or regex gives {@code null}, {@code []} and {@code false};
 * {@code $regexFind} answers {@code {match, idx, captures}} ({@code idx} in code points, an unmatched group
 * {@code null} in {@code captures}), {@code $regexFindAll} every non-overlapping match (an empty match moves on by
 * one character); options {@code i}, {@code m}, {@code s}, {@code x}; errors: 31022/31023 "... requires 'input'/'regex'
 * parameter", 51104 "... needs 'input' to be of type string", 51105 "... needs 'regex' to be of type string or
 * regex", 51106 "... needs 'options' to be of type string", 51107 options in both the regex and {@code options},
 * 51108 "... invalid flag in regex options: ..." (a {@code Location<code>} code name). The pattern runs on Java's
 * regular expressions, which agree with PCRE on the common syntax.
 *
 * <p>How: an {@code aggregate} whose pipeline uses one runs its stages before the first stage using one on the
 * engine, then that stage document by document, each use replaced by its value for the document (its arguments
 * evaluated by the engine's aggregation on that one document, in a scratch engine) as a {@code $literal}, then the
 * rest the same way; all results come back in the first batch. The stages that may use them: {@code $project},
 * {@code $addFields}, {@code $set}, {@code $replaceRoot}, {@code $replaceWith}, {@code $match} with {@code $expr};
 * another such stage is refused by the emulator. Pipeline updates and find projections run on this aggregation, so
 * they have them too.
 */
final class RegexExpressions {
    private static final Set<String> OPERATORS = Set.of("$regexFind", "$regexFindAll", "$regexMatch");
    private static final Set<String> PER_DOCUMENT_STAGES =
            Set.of("$project", "$addFields", "$set", "$replaceRoot", "$replaceWith", "$match");
    private static final String SCRATCH_DB = "regex";
    private static final String SCRATCH_COLLECTION = "doc";

    private final UnaryOperator<BsonDocument> engine;
    private final StorageEngine scratch;
    /** Whether the stage being evaluated is a {@code $match} (its {@code $expr} has no {@code $literal}). */
    private boolean inMatch;

    private RegexExpressions(UnaryOperator<BsonDocument> engine, StorageEngine scratch) {
        this.engine = engine;
        this.scratch = scratch;
    }

    /** Whether {@code command} is an {@code aggregate} whose pipeline uses one of the regular-expression operators. */
    static boolean needed(BsonDocument command) {
        return command.getFirstKey().equals("aggregate")
                && command.isArray("pipeline")
                && uses(command.getArray("pipeline"));
    }

    private static boolean uses(BsonValue value) {
        if (value.isDocument()) {
            for (Map.Entry<String, BsonValue> entry : value.asDocument().entrySet()) {
                if (OPERATORS.contains(entry.getKey()) || uses(entry.getValue())) {
                    return true;
                }
            }
        } else if (value.isArray()) {
            return value.asArray().stream().anyMatch(RegexExpressions::uses);
        }
        return false;
    }

    /**
     * Runs such an {@code aggregate}.
     *
     * @param database the database (for the reply's cursor namespace)
     * @param command  the command
     * @param engine   runs a command on the engine that holds the collection
     * @param scratch  an engine for one document at a time
     * @return the reply
     */
    static BsonDocument run(
            String database, BsonDocument command, UnaryOperator<BsonDocument> engine, StorageEngine scratch) {
        try {
            List<BsonDocument> results = scratch.atomically(
                    () -> new RegexExpressions(engine, scratch).pipeline(command, command.getArray("pipeline")));
            String collection = command.get("aggregate").isString()
                    ? command.getString("aggregate").getValue()
                    : "$cmd.aggregate";
            return new BsonDocument(
                            "cursor",
                            new BsonDocument("id", new BsonInt64(0))
                                    .append("ns", new BsonString(database + "." + collection))
                                    .append("firstBatch", new BsonArray(new ArrayList<>(results))))
                    .append("ok", new BsonDouble(1));
        } catch (CollectionOptions.EngineRefusal refusal) {
            return refusal.reply();
        }
    }

    private List<BsonDocument> pipeline(BsonDocument command, BsonArray stages) {
        int first = 0;
        while (!uses(stages.get(first))) {
            first++;
        }
        BsonDocument before = command.clone();
        before.put("pipeline", new BsonArray(new ArrayList<>(stages.subList(0, first))));
        before.put("cursor", new BsonDocument("batchSize", new BsonInt32(Integer.MAX_VALUE)));
        List<BsonDocument> documents = documents(engine.apply(before));
        BsonDocument stage = stages.get(first).asDocument();
        String name = stage.getFirstKey();
        if (!PER_DOCUMENT_STAGES.contains(name)) {
            throw CollectionOptions.unemulated(
                    "$regexFind, $regexFindAll or $regexMatch in the aggregation stage " + name);
        }
        List<BsonDocument> out = new ArrayList<>();
        inMatch = name.equals("$match");
        for (BsonDocument document : documents) {
            BsonDocument evaluated = substitute(stage, document).asDocument();
            out.addAll(onDocuments(List.of(document), new BsonArray(List.of(evaluated))));
        }
        List<BsonValue> rest = stages.subList(first + 1, stages.size());
        return rest.isEmpty() ? out : onDocuments(out, new BsonArray(new ArrayList<>(rest)));
    }

    /** Runs {@code stages} over {@code documents}, in their order, in the scratch engine. */
    private List<BsonDocument> onDocuments(List<BsonDocument> documents, BsonArray stages) {
        scratch.run(SCRATCH_DB, new BsonDocument("drop", new BsonString(SCRATCH_COLLECTION)));
        scratch.run(SCRATCH_DB, new BsonDocument("create", new BsonString(SCRATCH_COLLECTION)));
        // each document under a numbered _id, so that the scratch collection keeps their order; the stages see the
        // documents as they were
        BsonArray numbered = new BsonArray();
        for (int i = 0; i < documents.size(); i++) {
            numbered.add(new BsonDocument("_id", new BsonInt32(i)).append("d", documents.get(i)));
        }
        if (!numbered.isEmpty()) {
            scratch.run(
                    SCRATCH_DB,
                    new BsonDocument("insert", new BsonString(SCRATCH_COLLECTION)).append("documents", numbered));
        }
        BsonArray pipeline = new BsonArray();
        pipeline.add(new BsonDocument("$sort", new BsonDocument("_id", new BsonInt32(1))));
        pipeline.add(new BsonDocument("$replaceRoot", new BsonDocument("newRoot", new BsonString("$d"))));
        stages.forEach(pipeline::add);
        BsonDocument reply = scratch.run(
                SCRATCH_DB,
                new BsonDocument("aggregate", new BsonString(SCRATCH_COLLECTION))
                        .append("pipeline", pipeline)
                        .append("cursor", new BsonDocument("batchSize", new BsonInt32(Integer.MAX_VALUE))));
        return documents(reply);
    }

    private static List<BsonDocument> documents(BsonDocument reply) {
        if (reply.get("ok", new BsonInt32(0)).asNumber().doubleValue() != 1) {
            throw new CollectionOptions.EngineRefusal(
                    reply.get("code", new BsonInt32(8)).asNumber().intValue(),
                    reply.getString("codeName", new BsonString("UnknownError")).getValue(),
                    reply.getString("errmsg", new BsonString("")).getValue());
        }
        List<BsonDocument> documents = new ArrayList<>();
        reply.getDocument("cursor").getArray("firstBatch").forEach(d -> documents.add(d.asDocument()));
        return documents;
    }

    /** {@code value} with every use of the operators replaced by its {@code $literal} value for {@code document}. */
    private BsonValue substitute(BsonValue value, BsonDocument document) {
        if (value.isArray()) {
            BsonArray out = new BsonArray();
            value.asArray().forEach(v -> out.add(substitute(v, document)));
            return out;
        }
        if (!value.isDocument()) {
            return value;
        }
        BsonDocument in = value.asDocument();
        if (in.size() == 1 && OPERATORS.contains(in.getFirstKey())) {
            String operator = in.getFirstKey();
            BsonValue result = evaluate(operator, in.get(operator), document);
            // in $match's $expr as itself where it reads as the same constant (the engine's $expr has no $literal);
            // elsewhere as $literal ($project would read a bare boolean as an inclusion)
            return inMatch && selfEvaluating(result) ? result : new BsonDocument("$literal", result);
        }
        BsonDocument out = new BsonDocument();
        in.forEach((key, v) -> out.append(key, substitute(v, document)));
        return out;
    }

    /** Whether {@code value}, read as an expression, is {@code value}: no string starting with {@code $}. */
    private static boolean selfEvaluating(BsonValue value) {
        if (value.isString()) {
            return !value.asString().getValue().startsWith("$");
        }
        if (value.isDocument()) {
            return value.asDocument().entrySet().stream()
                    .allMatch(e -> !e.getKey().startsWith("$") && selfEvaluating(e.getValue()));
        }
        if (value.isArray()) {
            return value.asArray().stream().allMatch(RegexExpressions::selfEvaluating);
        }
        return true;
    }

    private BsonValue evaluate(String operator, BsonValue arguments, BsonDocument document) {
        if (!arguments.isDocument()) {
            throw refusal(51103, operator + " expects an object of named arguments but found: " + typeName(arguments));
        }
        BsonDocument named = arguments.asDocument();
        for (String key : named.keySet()) {
            if (!Set.of("input", "regex", "options").contains(key)) {
                throw refusal(31024, operator + " found an unknown argument: " + key);
            }
        }
        if (!named.containsKey("input")) {
            throw refusal(31022, operator + " requires 'input' parameter");
        }
        if (!named.containsKey("regex")) {
            throw refusal(31023, operator + " requires 'regex' parameter");
        }
        BsonDocument values = arguments(named, document);
        BsonValue input = values.get("input");
        BsonValue regex = values.get("regex");
        BsonValue options = values.get("options");
        String flags = "";
        String pattern = null;
        if (regex != null && !regex.isNull()) {
            if (regex.isString()) {
                pattern = regex.asString().getValue();
            } else if (regex.isRegularExpression()) {
                pattern = regex.asRegularExpression().getPattern();
                flags = regex.asRegularExpression().getOptions();
            } else {
                throw refusal(51105, operator + " needs 'regex' to be of type string or regex");
            }
        }
        if (options != null && !options.isNull()) {
            if (!options.isString()) {
                throw refusal(51106, operator + " needs 'options' to be of type string");
            }
            if (!flags.isEmpty()) {
                throw refusal(
                        51107, operator + ": found regex option(s) specified in both 'regex' and 'option'" + " fields");
            }
            flags = options.asString().getValue();
        }
        int javaFlags = 0;
        for (char flag : flags.toCharArray()) {
            javaFlags |= switch (flag) {
                case 'i' -> Pattern.CASE_INSENSITIVE | Pattern.UNICODE_CASE;
                case 'm' -> Pattern.MULTILINE;
                case 's' -> Pattern.DOTALL;
                case 'x' -> Pattern.COMMENTS;
                default -> throw refusal(51108, operator + " invalid flag in regex options: " + flag);
            };
        }
        if (input != null && !input.isNull() && !input.isString()) {
            throw refusal(51104, operator + " needs 'input' to be of type string");
        }
        if (input == null || input.isNull() || pattern == null) {
            return switch (operator) {
                case "$regexFind" -> BsonNull.VALUE;
                case "$regexFindAll" -> new BsonArray();
                default -> BsonBoolean.FALSE;
            };
        }
        Pattern compiled;
        try {
            compiled = Pattern.compile(pattern, javaFlags);
        } catch (PatternSyntaxException e) {
            throw refusal(51111, "Invalid Regex in " + operator + ": " + e.getDescription());
        }
        String text = input.asString().getValue();
        Matcher matcher = compiled.matcher(text);
        switch (operator) {
            case "$regexMatch" -> {
                return BsonBoolean.valueOf(matcher.find());
            }
            case "$regexFind" -> {
                return matcher.find() ? match(matcher, text) : BsonNull.VALUE;
            }
            default -> {
                BsonArray all = new BsonArray();
                int from = 0;
                do {
                    if (!matcher.find(from)) {
                        break;
                    }
                    all.add(match(matcher, text));
                    if (matcher.end() == matcher.start()) {
                        // an empty match: move on by one character (evaluate_regex.cpp, "we move on to the next byte")
                        if (matcher.start() >= text.length()) {
                            break;
                        }
                        from = text.offsetByCodePoints(matcher.start(), 1);
                    } else {
                        from = matcher.end();
                    }
                } while (from < text.length());
                return all;
            }
        }
    }

    private static BsonDocument match(Matcher matcher, String text) {
        BsonArray captures = new BsonArray();
        for (int group = 1; group <= matcher.groupCount(); group++) {
            String captured = matcher.group(group);
            captures.add(captured == null ? BsonNull.VALUE : new BsonString(captured));
        }
        return new BsonDocument("match", new BsonString(matcher.group()))
                .append("idx", new BsonInt32(text.codePointCount(0, matcher.start())))
                .append("captures", captures);
    }

    /** The operator's arguments evaluated on {@code document} by the engine's aggregation. */
    private BsonDocument arguments(BsonDocument named, BsonDocument document) {
        BsonDocument project = new BsonDocument("_id", new BsonInt32(0));
        BsonDocument literal = new BsonDocument();
        for (Map.Entry<String, BsonValue> argument : named.entrySet()) {
            BsonValue value = substitute(argument.getValue(), document); // nested uses first
            if (value.isRegularExpression()
                    || (value.isString() && !value.asString().getValue().startsWith("$"))) {
                literal.put(argument.getKey(), value);
            } else {
                project.put(argument.getKey(), value);
            }
        }
        BsonDocument values = new BsonDocument();
        if (project.size() > 1) {
            List<BsonDocument> evaluated =
                    onDocuments(List.of(document), new BsonArray(List.of(new BsonDocument("$project", project))));
            if (!evaluated.isEmpty()) {
                values.putAll(evaluated.get(0));
            }
        }
        values.putAll(literal);
        return values;
    }

    private static CollectionOptions.EngineRefusal refusal(int code, String message) {
        return new CollectionOptions.EngineRefusal(code, "Location" + code, message);
    }

    private static String typeName(BsonValue value) {
        return value.getBsonType().name().toLowerCase(java.util.Locale.ROOT);
    }
}
