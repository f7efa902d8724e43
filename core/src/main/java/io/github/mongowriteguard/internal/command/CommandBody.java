package io.github.mongowriteguard.internal.command;

import java.util.List;
import org.bson.BsonDocument;
import org.bson.BsonElement;

/**
 * A write command's fields and statements, held until each send adds its own fields ({@code maxTimeMS},
 * {@code txnNumber}, {@code writeConcern}, {@code comment}): either bytes the guard encoded
 * ({@link EncodedCommandBody}), or the statements as BSON values that the driver encodes once, straight into its
 * message ({@link TreeCommandBody}). Both give the server the same bytes.
 */
sealed interface CommandBody permits EncodedCommandBody, TreeCommandBody {

    /** The command as sent: the body, then {@code sendFields} in their order. */
    BsonDocument withSendFields(List<BsonElement> sendFields);
}
