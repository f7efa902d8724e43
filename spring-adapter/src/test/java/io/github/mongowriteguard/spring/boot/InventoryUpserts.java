package io.github.mongowriteguard.spring.boot;

import static org.springframework.data.mongodb.core.query.Criteria.where;
import static org.springframework.data.mongodb.core.query.Query.query;

import org.bson.Document;
import org.springframework.data.mongodb.core.BulkOperations;
import org.springframework.data.mongodb.core.FindAndReplaceOptions;

/** The README's bulk: 1,000 upserts by {@code _id} (0 to 999), each setting one field, run on a template's bulk. */
final class InventoryUpserts {
    private InventoryUpserts() {}

    static void upsert1000(BulkOperations bulk, String field) {
        for (int i = 0; i < 1000; i++) {
            bulk.replaceOne(
                    query(where("_id").is(i)),
                    new Document(field, i),
                    FindAndReplaceOptions.options().upsert());
        }
        bulk.execute();
    }
}
