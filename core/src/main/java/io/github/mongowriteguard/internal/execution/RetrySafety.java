package io.github.mongowriteguard.internal.execution;

import io.github.mongowriteguard.internal.plan.PlannedBulk;
import io.github.mongowriteguard.internal.plan.WriteRecord;
import org.bson.BsonDocument;
import org.bson.codecs.configuration.CodecRegistry;
import org.bson.conversions.Bson;

/**
 * Whether a write whose outcome is unknown may be sent again by the caller. The caller's resend is a new server copy
 * (a new call has a new session and transaction number), so it is safe only when a second application of the write
 * changes nothing: an insert that carries its {@code _id} (a second copy fails with a duplicate key), a replacement
 * or an update of idempotent operators ({@code $set}, {@code $unset}, ...) on a document named by {@code _id}, a
 * delete by {@code _id}. Never an {@code $inc}, a pipeline, a write named by other fields (a second run may match
 * another document), or a multi-document write.
 */
final class RetrySafety {
    private RetrySafety() {}

    static boolean ofNewCopy(PlannedBulk plan, int index, CodecRegistry registry) {
        WriteRecord<?> write = plan.write(index);
        boolean keyed = plan.id(index).isPresent();
        return switch (plan.sentAs(index)) { // a pinned UpdateMany/DeleteMany follows the single-document rules
            case INSERT_ONE, REPLACE_ONE, DELETE_ONE -> keyed;
            case UPDATE_ONE -> keyed && write.update() != null && isIdempotent(write.update(), registry);
            case UPDATE_MANY, DELETE_MANY -> false;
        };
    }

    private static boolean isIdempotent(Bson update, CodecRegistry registry) {
        BsonDocument operators = update instanceof BsonDocument document
                ? document
                : update.toBsonDocument(BsonDocument.class, registry);
        return IdempotentUpdates.isProvablyIdempotent(operators);
    }
}
