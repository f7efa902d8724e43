package io.github.mongowriteguard.internal.plan;

import io.github.mongowriteguard.bulk.WriteKind;
import io.github.mongowriteguard.exception.InvalidBulkException.Problem;
import java.util.List;
import java.util.Set;
import org.bson.BsonDocument;
import org.bson.conversions.Bson;
import org.jspecify.annotations.Nullable;

/**
 * The checks of an {@code UpdateOneModel} / {@code UpdateManyModel}'s update before anything is sent, as the driver
 * makes them: an update document must be non-empty and hold only update operators (the driver's
 * {@code UpdateFieldNameValidator}), a pipeline must be non-empty (the driver: "Invalid pipeline for an update. The
 * pipeline may not be empty."), and no part may nest deeper than the driver writes it ({@link NestingDepth}).
 */
final class UpdateChecks {

    private final DepthCheckedBson bson;
    private final DocumentShortcuts shortcuts;

    UpdateChecks(DepthCheckedBson bson, DocumentShortcuts shortcuts) {
        this.bson = bson;
        this.shortcuts = shortcuts;
    }

    /**
     * Checks an update document or pipeline.
     *
     * @return the update document converted to BSON where checking it converted it, or null (a pipeline, a {@code
     *     Document} or {@code BsonDocument}, which are read without converting them)
     */
    @Nullable
    BsonDocument checkUpdate(
            int index, WriteKind kind, @Nullable Bson update, @Nullable List<? extends Bson> pipeline) {
        if (update == null) {
            if (pipeline == null) {
                throw WriteInspector.invalid(
                        index,
                        kind.modelName(),
                        Problem.NULL_ELEMENT,
                        "the update is null; pass an update document such as {$set: {...}} or a pipeline");
            }
            if (pipeline.isEmpty()) {
                throw WriteInspector.invalid(
                        index,
                        kind.modelName(),
                        Problem.UPDATE_WITHOUT_OPERATORS,
                        "the update pipeline is empty, which the driver refuses too (\"Invalid pipeline for an update."
                                + " The pipeline may not be empty.\"); give it a stage such as {$set: {...}}");
            }
            int stage = 0;
            for (Bson step : pipeline) {
                if (step == null) {
                    throw WriteInspector.invalid(
                            index,
                            kind.modelName(),
                            Problem.NULL_ELEMENT,
                            "stage " + stage + " of the update pipeline is null; remove it");
                }
                bson.checkDepthOnly(
                        index, kind, "update pipeline stage " + stage, step, NestingDepth.STATEMENT_ELEMENT);
                stage++;
            }
            return null; // a pipeline's stages ($set, $unset, $replaceWith, ...) are checked by the server
        }
        BsonDocument converted = null;
        Set<String> fields = shortcuts.updateFields(update);
        if (fields == null) {
            converted = bson.checkDepth(index, kind, "update", update, NestingDepth.STATEMENT_PART);
            fields = converted.keySet();
        } else if (NestingDepth.exceeds(update, NestingDepth.STATEMENT_PART)) { // a Document or BsonDocument: walked
            throw NestingDepth.tooDeep(index, kind.modelName(), "update", NestingDepth.STATEMENT_PART);
        }
        if (fields.isEmpty()) {
            throw WriteInspector.invalid(
                    index,
                    kind.modelName(),
                    Problem.UPDATE_WITHOUT_OPERATORS,
                    "the update document is empty; give it an update operator such as {$set: {...}},"
                            + " or use DeleteOneModel/ReplaceOneModel");
        }
        for (String field : fields) {
            if (!field.startsWith("$")) {
                throw WriteInspector.invalid(
                        index,
                        kind.modelName(),
                        Problem.UPDATE_WITHOUT_OPERATORS,
                        "the update document has the field '" + field + "', which is not an update operator;"
                                + " wrap the fields in {$set: {...}}, or use ReplaceOneModel to replace the whole document");
            }
        }
        return converted;
    }

    void checkArrayFilters(int index, WriteKind kind, @Nullable List<? extends Bson> arrayFilters) {
        if (arrayFilters == null) {
            return;
        }
        int position = 0;
        for (Bson filter : arrayFilters) {
            if (filter != null) {
                bson.checkDepthOnly(index, kind, "array filter " + position, filter, NestingDepth.STATEMENT_ELEMENT);
            }
            position++;
        }
    }
}
