package io.github.mongowriteguard.faults;

import com.mongodb.client.model.DeleteManyModel;
import com.mongodb.client.model.Filters;
import com.mongodb.client.model.InsertOneModel;
import com.mongodb.client.model.ReplaceOneModel;
import com.mongodb.client.model.ReplaceOptions;
import com.mongodb.client.model.UpdateManyModel;
import com.mongodb.client.model.UpdateOneModel;
import com.mongodb.client.model.Updates;
import com.mongodb.client.model.WriteModel;
import org.bson.Document;

/**
 * One write of the workload: its unique tag (how its effects are found in the final documents), its kind and what it
 * targets (the key of a replacement or counter, the group of an {@code updateMany}, the scratch set of a
 * {@code deleteMany}).
 *
 * @param tag      unique in the run, e.g. {@code "c1-42-0"}
 * @param kind     what it does
 * @param target   the {@code _id} of the replaced document or counter, the group or scratch set; null for inserts
 * @param sequence the client's running number of its replacements of {@code target} (replacements only)
 */
public record Write(String tag, WriteKind kind, String target, int sequence) {

    /**
     * A fresh driver model of this write. An insert's document has no {@code _id}: the guard gives it one before the
     * first send; the raw driver gives each attempt of the application loop a new one (a new document per attempt, as
     * an application that rebuilds it from its message).
     */
    public WriteModel<Document> model() {
        switch (kind) {
            case INSERT:
                return new InsertOneModel<>(new Document("tag", tag).append("t", "ins"));
            case REPLACE:
                return new ReplaceOneModel<>(
                        Filters.eq("_id", target),
                        new Document("tag", tag).append("t", "ent").append("seq", sequence),
                        new ReplaceOptions().upsert(true));
            case INC:
                return new UpdateOneModel<>(
                        Filters.eq("_id", target), Updates.combine(Updates.inc("n", 1), Updates.push("log", tag)));
            case UPDATE_MANY:
                return new UpdateManyModel<>(Filters.eq("g", Integer.parseInt(target)), Updates.push("mlog", tag));
            case DELETE_MANY:
                return new DeleteManyModel<>(Filters.eq("s", target));
            default:
                throw new IllegalStateException(kind.toString());
        }
    }

    @Override
    public String toString() {
        return kind + " " + tag + (target == null ? "" : " on " + target);
    }
}
