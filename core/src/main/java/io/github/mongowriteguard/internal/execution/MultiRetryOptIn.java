package io.github.mongowriteguard.internal.execution;

import com.mongodb.client.model.WriteModel;
import io.github.mongowriteguard.bulk.WriteKind;
import io.github.mongowriteguard.exception.InvalidBulkException;
import io.github.mongowriteguard.exception.InvalidBulkException.Problem;
import io.github.mongowriteguard.internal.plan.WriteRecord;
import java.util.List;
import org.bson.BsonDocument;
import org.bson.codecs.configuration.CodecRegistry;
import org.bson.conversions.Bson;

/**
 * Checks the explicit opt-in to retry multi-document writes before anything is sent: every {@code updateMany} must
 * be provably idempotent, and no {@code deleteMany} may be in the bulk.
 */
final class MultiRetryOptIn {
    private MultiRetryOptIn() {}

    static <T> void check(
            List<? extends WriteModel<? extends T>> models, Class<T> documentClass, CodecRegistry registry) {
        if (models == null) {
            return;
        }
        int index = 0;
        for (WriteModel<? extends T> model : models) {
            WriteRecord<? extends T> write = model == null ? null : WriteRecord.of(model);
            if (write == null) {
                index++;
                continue; // the planner refuses it with its message
            }
            if (write.kind() == WriteKind.DELETE_MANY) {
                throw new InvalidBulkException(
                        index,
                        Problem.NOT_IDEMPOTENT,
                        "index " + index + ": deleteMany is never retried, even with the idempotent"
                                + " multi-document retry opt-in: a second run deletes documents that arrived in between. Remove the opt-in"
                                + " for this call, or delete by _id. Nothing was sent.");
            }
            if (write.kind() == WriteKind.UPDATE_MANY) {
                Bson document = write.update();
                if (document == null) {
                    throw new InvalidBulkException(
                            index,
                            Problem.NOT_IDEMPOTENT,
                            "index " + index + ": an updateMany with a pipeline is not provably"
                                    + " idempotent and is never retried; remove the opt-in for this call. Nothing was sent.");
                }
                BsonDocument operators = document.toBsonDocument(documentClass, registry);
                if (!IdempotentUpdates.isProvablyIdempotent(operators)) {
                    throw new InvalidBulkException(
                            index,
                            Problem.NOT_IDEMPOTENT,
                            "index " + index + ": updateMany with " + IdempotentUpdates.firstNonIdempotent(operators)
                                    + " is not idempotent: a retry would apply it again. Only $set, $unset, $min, $max, $addToSet, $pull,"
                                    + " $setOnInsert and $currentDate may be retried; remove the opt-in for this call or rewrite the update."
                                    + " Nothing was sent.");
                }
            }
            index++;
        }
    }
}
