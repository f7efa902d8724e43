package io.github.mongowriteguard.benchmarks.lab;

import com.mongodb.client.model.Filters;
import com.mongodb.client.model.ReplaceOneModel;
import com.mongodb.client.model.ReplaceOptions;
import com.mongodb.client.model.WriteModel;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Random;
import java.util.Set;
import org.bson.Document;

/**
 * The articles' bulk: stock levels upserted by a compound {@code _id: {productId, storeId}} on a collection sharded
 * {@code {_id: "hashed"}}, so neighbouring writes land on unrelated shards.
 */
public final class Workload {
    private Workload() {}

    /** {@code n} stock documents with distinct ids, the same for the same seed. */
    public static List<Document> stock(int n, long seed) {
        Random random = new Random(seed);
        Set<Document> ids = new HashSet<>();
        List<Document> documents = new ArrayList<>(n);
        while (documents.size() < n) {
            Document id =
                    new Document("productId", random.nextInt(1_000_000)).append("storeId", 1 + random.nextInt(500));
            if (ids.add(id)) {
                documents.add(new Document("_id", id)
                        .append("quantity", random.nextInt(100))
                        .append("seed", seed));
            }
        }
        return documents;
    }

    /** One {@code ReplaceOne} upsert per document, keyed by its {@code _id}. */
    public static List<WriteModel<Document>> upserts(List<Document> documents) {
        List<WriteModel<Document>> models = new ArrayList<>(documents.size());
        for (Document document : documents) {
            models.add(new ReplaceOneModel<>(
                    Filters.eq("_id", document.get("_id")), document, new ReplaceOptions().upsert(true)));
        }
        return models;
    }
}
