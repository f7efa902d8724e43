package io.github.mongowriteguard.testkit.engine;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.mongodb.MongoBulkWriteException;
import com.mongodb.MongoCommandException;
import com.mongodb.MongoWriteException;
import com.mongodb.client.MongoClient;
import com.mongodb.client.MongoCollection;
import com.mongodb.client.MongoDatabase;
import com.mongodb.client.model.BulkWriteOptions;
import com.mongodb.client.model.CreateCollectionOptions;
import com.mongodb.client.model.Filters;
import com.mongodb.client.model.InsertOneOptions;
import com.mongodb.client.model.ReplaceOptions;
import com.mongodb.client.model.UpdateOneModel;
import com.mongodb.client.model.UpdateOptions;
import com.mongodb.client.model.Updates;
import com.mongodb.client.model.ValidationLevel;
import com.mongodb.client.model.ValidationOptions;
import io.github.mongowriteguard.testkit.Clients;
import io.github.mongowriteguard.testkit.EmulatedCluster;
import io.github.mongowriteguard.testkit.EmulatedReplicaSet;
import java.util.ArrayList;
import java.util.List;
import org.bson.BsonDocument;
import org.bson.Document;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * {@code $jsonSchema} validators on the documents updates, replacements and upserts produce, through the real driver,
 * as mongod checks them ({@code src/mongo/db/catalog/collection_write_path.cpp}, {@code updateDocument}: strict refuses
 * a new document that fails, moderate only when the old one passed): {@code DocumentValidationFailure} (121) with
 * {@code errInfo}, and the document left as it was.
 */
class UpdateValidationTest {
    private static final BsonDocument SCHEMA =
            BsonDocument.parse("{$jsonSchema: {required: ['qty'], properties: {qty: {bsonType: 'int', minimum: 0}}}}");
    private static EmulatedReplicaSet set;
    private static MongoClient client;

    @BeforeAll
    static void start() {
        set = EmulatedCluster.replicaSet().start();
        client = Clients.client(set.connectionString());
    }

    @AfterAll
    static void stop() {
        client.close();
        set.close();
    }

    private static MongoCollection<Document> validated(String name, ValidationLevel level) {
        MongoDatabase database = client.getDatabase("update_validation");
        database.createCollection(
                name,
                new CreateCollectionOptions()
                        .validationOptions(
                                new ValidationOptions().validator(SCHEMA).validationLevel(level)));
        MongoCollection<Document> collection = database.getCollection(name);
        collection.insertMany(List.of(
                new Document("_id", 1).append("qty", 5),
                new Document("_id", 2).append("qty", 0),
                new Document("_id", 3).append("qty", 5)));
        return collection;
    }

    private static List<Document> all(MongoCollection<Document> collection) {
        return collection.find().sort(new Document("_id", 1)).into(new ArrayList<>());
    }

    @Test
    void anUpdate_aReplacement_andAnUpsert_thatFailTheSchema_areRefused_andChangeNothing() {
        MongoCollection<Document> items = validated("single", ValidationLevel.STRICT);
        List<Document> before = all(items);

        assertThatThrownBy(() -> items.updateOne(Filters.eq("_id", 1), Updates.set("qty", -1)))
                .isInstanceOfSatisfying(MongoWriteException.class, e -> {
                    assertThat(e.getCode()).isEqualTo(121);
                    assertThat(e.getError().getMessage()).isEqualTo("Document failed validation");
                    BsonDocument errInfo = e.getError().getDetails();
                    assertThat(errInfo.get("failingDocumentId").asInt32().getValue())
                            .isEqualTo(1);
                    assertThat(errInfo.getDocument("details")
                                    .getString("operatorName")
                                    .getValue())
                            .isEqualTo("$jsonSchema");
                });
        assertThatThrownBy(() -> items.replaceOne(Filters.eq("_id", 2), new Document("name", "no qty")))
                .isInstanceOfSatisfying(
                        MongoWriteException.class, e -> assertThat(e.getCode()).isEqualTo(121));
        assertThatThrownBy(() -> items.updateOne(
                        Filters.eq("_id", 9), Updates.set("qty", "many"), new UpdateOptions().upsert(true)))
                .isInstanceOfSatisfying(
                        MongoWriteException.class, e -> assertThat(e.getCode()).isEqualTo(121));
        assertThatThrownBy(() -> items.replaceOne(
                        Filters.eq("_id", 8), new Document("qty", -3), new ReplaceOptions().upsert(true)))
                .isInstanceOfSatisfying(
                        MongoWriteException.class, e -> assertThat(e.getCode()).isEqualTo(121));
        assertThatThrownBy(() -> items.findOneAndUpdate(Filters.eq("_id", 3), Updates.unset("qty")))
                .isInstanceOfSatisfying(MongoCommandException.class, e -> {
                    assertThat(e.getErrorCode()).isEqualTo(121);
                    assertThat(e.getResponse().getDocument("errInfo").get("failingDocumentId"))
                            .isEqualTo(new org.bson.BsonInt32(3));
                });

        assertThat(all(items)).isEqualTo(before);
        // what passes the schema is stored, and bypassDocumentValidation stores what does not
        assertThat(items.updateOne(Filters.eq("_id", 1), Updates.set("qty", 7)).getModifiedCount())
                .isEqualTo(1);
        items.updateOne(
                Filters.eq("_id", 2), Updates.set("qty", -2), new UpdateOptions().bypassDocumentValidation(true));
        assertThat(all(items)).extracting(d -> d.get("qty")).containsExactly(7, -2, 5);
    }

    @Test
    void aMultiUpdate_stopsAtTheFirstRefusedDocument_andABulkReportsTheRefusedStatement() {
        MongoCollection<Document> items = validated("multi", ValidationLevel.STRICT);

        // natural order 1, 2, 3: 1 goes to 4, 2 would go to -1 and is refused, 3 is not reached
        assertThatThrownBy(() -> items.updateMany(Filters.empty(), Updates.inc("qty", -1)))
                .isInstanceOfSatisfying(MongoWriteException.class, e -> {
                    assertThat(e.getCode()).isEqualTo(121);
                    assertThat(e.getError().getDetails().get("failingDocumentId"))
                            .isEqualTo(new org.bson.BsonInt32(2));
                });
        assertThat(all(items)).extracting(d -> d.get("qty")).containsExactly(4, 0, 5);

        assertThatThrownBy(() -> items.bulkWrite(
                        List.of(
                                new UpdateOneModel<>(Filters.eq("_id", 1), Updates.set("qty", 1)),
                                new UpdateOneModel<>(Filters.eq("_id", 2), Updates.set("qty", -1)),
                                new UpdateOneModel<>(Filters.eq("_id", 3), Updates.set("qty", 3))),
                        new BulkWriteOptions().ordered(false)))
                .isInstanceOfSatisfying(MongoBulkWriteException.class, e -> {
                    assertThat(e.getWriteErrors()).hasSize(1);
                    assertThat(e.getWriteErrors().get(0).getIndex()).isEqualTo(1);
                    assertThat(e.getWriteErrors().get(0).getCode()).isEqualTo(121);
                    assertThat(e.getWriteResult().getMatchedCount()).isEqualTo(2);
                    assertThat(e.getWriteResult().getModifiedCount()).isEqualTo(2);
                });
        assertThat(all(items)).extracting(d -> d.get("qty")).containsExactly(1, 0, 3);
    }

    @Test
    void moderate_letsADocumentThatAlreadyFailed_stayFailing_butNotAValidOneBecomeInvalid() {
        MongoCollection<Document> items = validated("moderate", ValidationLevel.MODERATE);
        items.insertOne(
                new Document("_id", 4).append("qty", -4), new InsertOneOptions().bypassDocumentValidation(true));

        items.updateOne(Filters.eq("_id", 4), Updates.set("qty", -5)); // bad -> bad
        assertThatThrownBy(() -> items.updateOne(Filters.eq("_id", 1), Updates.set("qty", -1)))
                .isInstanceOfSatisfying(
                        MongoWriteException.class, e -> assertThat(e.getCode()).isEqualTo(121));
        assertThat(all(items)).extracting(d -> d.get("qty")).containsExactly(5, 0, 5, -5);
    }
}
