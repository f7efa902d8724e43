package io.github.mongowriteguard.internal.plan;

import com.mongodb.MongoClientSettings;
import com.mongodb.client.model.DeleteManyModel;
import com.mongodb.client.model.DeleteOneModel;
import com.mongodb.client.model.InsertOneModel;
import com.mongodb.client.model.ReplaceOneModel;
import com.mongodb.client.model.ReplaceOptions;
import com.mongodb.client.model.UpdateManyModel;
import com.mongodb.client.model.UpdateOneModel;
import com.mongodb.client.model.UpdateOptions;
import com.mongodb.client.model.WriteModel;
import io.github.mongowriteguard.bulk.Round;
import java.util.List;
import org.bson.Document;

/** Short names for the write models the tests build: {@code insert(1), update(1), replaceUpsert(1), delete(1)}. */
final class Models {

    private Models() {}

    static BulkPlanner<Document> planner() {
        return BulkPlanner.of(Document.class, MongoClientSettings.getDefaultCodecRegistry());
    }

    static PlannedBulk planOrdered(List<WriteModel<Document>> models) {
        return planner().plan(models, PlanOptions.ordered());
    }

    static PlannedBulk planUnordered(List<WriteModel<Document>> models) {
        return planner().plan(models, PlanOptions.unordered());
    }

    static WriteModel<Document> insert(Object id) {
        return new InsertOneModel<>(new Document("_id", id).append("v", 1));
    }

    static WriteModel<Document> insertWithoutId() {
        return new InsertOneModel<>(new Document("v", 1));
    }

    static WriteModel<Document> update(Object id) {
        return new UpdateOneModel<>(new Document("_id", id), new Document("$inc", new Document("n", 1)));
    }

    static WriteModel<Document> upsert(Object id) {
        return new UpdateOneModel<>(
                new Document("_id", id), new Document("$inc", new Document("n", 1)), new UpdateOptions().upsert(true));
    }

    static WriteModel<Document> replace(Object id) {
        return new ReplaceOneModel<>(new Document("_id", id), new Document("v", 2));
    }

    static WriteModel<Document> replaceUpsert(Object id) {
        return new ReplaceOneModel<>(new Document("_id", id), new Document("v", 2), new ReplaceOptions().upsert(true));
    }

    static WriteModel<Document> delete(Object id) {
        return new DeleteOneModel<>(new Document("_id", id));
    }

    static WriteModel<Document> updateMany(String status) {
        return new UpdateManyModel<>(new Document("status", status), new Document("$set", new Document("seen", true)));
    }

    static WriteModel<Document> deleteMany(String status) {
        return new DeleteManyModel<>(new Document("status", status));
    }

    /** The indices of each round, e.g. {@code [[0, 1], [2]]}. */
    static List<List<Integer>> roundIndices(PlannedBulk plan) {
        return plan.rounds().stream().map(Round::indices).map(List::copyOf).toList();
    }
}
