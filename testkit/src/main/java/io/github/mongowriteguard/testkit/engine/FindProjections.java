package io.github.mongowriteguard.testkit.engine;

import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.function.UnaryOperator;
import org.bson.BsonArray;
import org.bson.BsonDocument;
import org.bson.BsonInt32;
import org.bson.BsonValue;

/**
 * Find projections with aggregation expressions, as 4.4+ servers take them ({@code src/mongo/db/query/projection_parser.cpp}
 * {@code parseAndAnalyze}: a projection value that is not a number, a boolean or one of the find operators
 * {@code $elemMatch}, {@code $slice}, {@code $meta} is an expression: {@code {total: {$add: ["$a", "$b"]}}},
 * {@code {label: {$concat: [...]}}}, a field path {@code "$a"}, a literal {@code "x"} or {@code {$literal: ...}}).
 * mongo-java-server's find does not evaluate them, so such a {@code find} runs here as the engine's aggregation
 * ({@code $match} of the filter, {@code $sort}, {@code $skip}, {@code $limit}, then {@code $project} of the projection,
 * whose rules for these values are the find projection's); its cursor answers {@code getMore} as a find's does. A
 * projection mixing expressions with the find operators or a positional {@code .$} is refused by the emulator (an
 * {@code InternalError} saying so), not run otherwise.
 */
final class FindProjections {
    private static final Set<String> FIND_OPERATORS = Set.of("$elemMatch", "$slice", "$meta");

    private FindProjections() {}

    /** Whether {@code command} is a {@code find} whose projection holds an aggregation expression. */
    static boolean needed(BsonDocument command) {
        if (!command.getFirstKey().equals("find") || !command.isDocument("projection")) {
            return false;
        }
        return hasExpression(command.getDocument("projection"));
    }

    private static boolean hasExpression(BsonDocument projection) {
        for (String field : projection.keySet()) {
            BsonValue value = projection.get(field);
            if (value.isNumber() || value.isBoolean()) {
                continue;
            }
            if (value.isDocument()) {
                BsonDocument document = value.asDocument();
                if (document.isEmpty()) {
                    continue;
                }
                if (!document.getFirstKey().startsWith("$")) {
                    if (hasExpression(document)) {
                        return true;
                    }
                    continue;
                }
                if (FIND_OPERATORS.contains(document.getFirstKey())) {
                    continue;
                }
            }
            return true;
        }
        return false;
    }

    private static boolean hasFindOperator(BsonDocument projection) {
        for (String field : projection.keySet()) {
            BsonValue value = projection.get(field);
            if (field.endsWith(".$")) {
                return true;
            }
            if (value.isDocument() && !value.asDocument().isEmpty()) {
                String first = value.asDocument().getFirstKey();
                if (FIND_OPERATORS.contains(first) || (!first.startsWith("$") && hasFindOperator(value.asDocument()))) {
                    return true;
                }
            }
        }
        return false;
    }

    /**
     * Runs such a {@code find} as the engine's aggregation.
     *
     * @param command the find
     * @param engine  runs a command on the engine
     * @return the reply
     */
    static BsonDocument run(BsonDocument command, UnaryOperator<BsonDocument> engine) {
        BsonDocument projection = command.getDocument("projection");
        if (hasFindOperator(projection)) {
            return CollectionOptions.unemulated(
                            "a find projection mixing aggregation expressions with $elemMatch, $slice, $meta or a"
                                    + " positional $")
                    .reply();
        }
        List<BsonValue> pipeline = new ArrayList<>();
        pipeline.add(new BsonDocument("$match", command.getDocument("filter", new BsonDocument())));
        if (command.isDocument("sort") && !command.getDocument("sort").isEmpty()) {
            pipeline.add(new BsonDocument("$sort", command.getDocument("sort")));
        }
        if (command.isNumber("skip") && command.getNumber("skip").longValue() > 0) {
            pipeline.add(new BsonDocument("$skip", command.get("skip")));
        }
        if (command.isNumber("limit") && command.getNumber("limit").longValue() != 0) {
            pipeline.add(new BsonDocument(
                    "$limit", new BsonInt32(Math.abs(command.getNumber("limit").intValue()))));
        }
        pipeline.add(new BsonDocument("$project", projection));
        BsonDocument cursor = new BsonDocument();
        if (command.isNumber("batchSize")) {
            cursor.put("batchSize", command.get("batchSize"));
        }
        return engine.apply(new BsonDocument("aggregate", command.get("find"))
                .append("pipeline", new BsonArray(pipeline))
                .append("cursor", cursor));
    }
}
