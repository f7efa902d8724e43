package io.github.mongowriteguard.internal.execution;

import java.util.Set;
import org.bson.BsonDocument;
import org.bson.BsonValue;

/**
 * The rule for the explicit opt-in to retry a multi-document update: only updates whose every operator gives the
 * same result when applied twice: {@code $set}, {@code $unset}, {@code $min}, {@code $max}, {@code $addToSet},
 * {@code $pull}, {@code $setOnInsert}, {@code $currentDate} (its second run moves the date, which callers of a
 * timestamp accept). Never {@code $inc}, {@code $mul}, {@code $push}, {@code $pop}, {@code $bit}, {@code $rename},
 * replacements or pipelines. Deletes by filter are never retried: a second run deletes documents
 * that arrived in between.
 */
final class IdempotentUpdates {
    private static final Set<String> IDEMPOTENT =
            Set.of("$set", "$unset", "$min", "$max", "$addToSet", "$pull", "$currentDate", "$setOnInsert");

    private IdempotentUpdates() {}

    /**
     * True when {@code update} is an operator document using only idempotent operators.
     *
     * @param update an update document or pipeline
     * @return false for a pipeline, a replacement or any non-idempotent operator
     */
    public static boolean isProvablyIdempotent(BsonValue update) {
        if (!update.isDocument() || update.asDocument().isEmpty()) {
            return false; // a pipeline or a replacement
        }
        for (String operator : update.asDocument().keySet()) {
            if (!IDEMPOTENT.contains(operator)) {
                return false;
            }
        }
        return true;
    }

    /**
     * The first operator that is not idempotent, for messages, or null.
     *
     * @param update an update document
     * @return the operator, e.g. {@code $inc}, or null when every operator is idempotent
     */
    public static @org.jspecify.annotations.Nullable String firstNonIdempotent(BsonDocument update) {
        for (String operator : update.keySet()) {
            if (!IDEMPOTENT.contains(operator)) {
                return operator;
            }
        }
        return null;
    }
}
