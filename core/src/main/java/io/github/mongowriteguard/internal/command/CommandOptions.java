package io.github.mongowriteguard.internal.command;

import com.mongodb.client.model.BulkWriteOptions;
import io.github.mongowriteguard.internal.plan.NestingDepth;
import org.bson.BsonDocument;
import org.bson.BsonValue;
import org.bson.codecs.configuration.CodecRegistry;
import org.bson.conversions.Bson;
import org.jspecify.annotations.Nullable;

/**
 * The caller's command-level options, read once from the driver's {@link BulkWriteOptions}: the driver sends
 * {@code bypassDocumentValidation}, {@code comment} and {@code let} on every command of a bulk (driver-core
 * {@code BulkWriteBatch}).
 *
 * @param bypassDocumentValidation as given, or null when not set
 * @param comment                  the caller's comment, or null (the guard then sends its own, to find its copies)
 * @param let                      variables for the filters and updates, or null
 */
public record CommandOptions(
        @Nullable Boolean bypassDocumentValidation,
        @Nullable BsonValue comment,
        @Nullable BsonDocument let) {

    /** No option set. */
    public static final CommandOptions NONE = new CommandOptions(null, null, null);

    /**
     * Reads the caller's options; {@code let} is encoded with the collection's codecs, as the driver does.
     *
     * @throws org.bson.BsonSerializationException when {@code let} or a {@code comment} document nests deeper than the
     *     driver writes it (the driver's exception, before anything is sent: {@link NestingDepth#checkOption})
     */
    public static CommandOptions from(BulkWriteOptions options, Class<?> documentClass, CodecRegistry registry) {
        BsonValue comment = options.getComment();
        if (comment != null) {
            NestingDepth.checkOption("comment", comment, documentClass, registry);
        }
        Bson let = options.getLet();
        return new CommandOptions(
                options.getBypassDocumentValidation(),
                comment,
                let == null
                        ? null
                        : NestingDepth.checkOption("let", let, documentClass, registry)
                                .asDocument());
    }
}
