package io.github.mongowriteguard.testkit.engine;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.mongodb.MongoCommandException;
import com.mongodb.MongoWriteException;
import com.mongodb.client.MongoClient;
import com.mongodb.client.MongoCollection;
import com.mongodb.client.MongoDatabase;
import com.mongodb.client.model.CreateCollectionOptions;
import com.mongodb.client.model.InsertOneOptions;
import com.mongodb.client.model.ValidationAction;
import com.mongodb.client.model.ValidationOptions;
import io.github.mongowriteguard.testkit.Clients;
import io.github.mongowriteguard.testkit.EmulatedCluster;
import io.github.mongowriteguard.testkit.EmulatedReplicaSet;
import java.util.List;
import org.bson.BsonDocument;
import org.bson.Document;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * {@code $jsonSchema} validators through the real driver: set by {@code create} and {@code collMod}, checked on insert,
 * a failure is {@code DocumentValidationFailure} (121) with the server's {@code errInfo} details (the 5.0+ shape:
 * {@code src/mongo/db/matcher/doc_validation_error.cpp}), and {@code bypassDocumentValidation} or
 * {@code validationAction: "warn"} store the document.
 */
class JsonSchemaValidationTest {
    private static final BsonDocument SCHEMA =
            BsonDocument.parse("{$jsonSchema: {bsonType: 'object', required: ['name',"
                    + " 'qty'], properties: {name: {bsonType: 'string', minLength: 2}, qty: {bsonType: 'int', minimum: 0},"
                    + " tags: {bsonType: 'array', items: {enum: ['a', 'b']}}}}}");
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

    @Test
    void aDocumentThatFailsTheSchema_isDocumentValidationFailure_withTheServersDetails() {
        MongoDatabase database = client.getDatabase("schema");
        database.createCollection(
                "items", new CreateCollectionOptions().validationOptions(new ValidationOptions().validator(SCHEMA)));
        MongoCollection<Document> items = database.getCollection("items");
        items.insertOne(
                new Document("_id", 1).append("name", "ok").append("qty", 1).append("tags", List.of("a")));

        assertThatThrownBy(() -> items.insertOne(
                        new Document("_id", 2).append("name", "x").append("qty", -1)))
                .isInstanceOfSatisfying(MongoWriteException.class, e -> {
                    assertThat(e.getCode()).isEqualTo(121);
                    assertThat(e.getError().getMessage()).isEqualTo("Document failed validation");
                    BsonDocument errInfo = e.getError().getDetails();
                    assertThat(errInfo.get("failingDocumentId").asInt32().getValue())
                            .isEqualTo(2);
                    BsonDocument details = errInfo.getDocument("details");
                    assertThat(details.getString("operatorName").getValue()).isEqualTo("$jsonSchema");
                    BsonDocument properties =
                            details.getArray("schemaRulesNotSatisfied").get(0).asDocument();
                    assertThat(properties.getString("operatorName").getValue()).isEqualTo("properties");
                    assertThat(properties.getArray("propertiesNotSatisfied"))
                            .extracting(p ->
                                    p.asDocument().getString("propertyName").getValue())
                            .containsExactly("name", "qty");
                });
        assertThatThrownBy(() -> items.insertOne(new Document("_id", 3).append("name", "no qty")))
                .isInstanceOfSatisfying(
                        MongoWriteException.class,
                        e -> assertThat(e.getError()
                                        .getDetails()
                                        .getDocument("details")
                                        .getArray("schemaRulesNotSatisfied")
                                        .get(0)
                                        .asDocument()
                                        .getArray("missingProperties"))
                                .extracting(v -> v.asString().getValue())
                                .containsExactly("qty"));
        assertThatThrownBy(() -> items.insertOne(new Document("_id", 4)
                        .append("name", "tags")
                        .append("qty", 1)
                        .append("tags", List.of("a", "z"))))
                .isInstanceOf(MongoWriteException.class);

        items.insertOne(new Document("_id", 5), new InsertOneOptions().bypassDocumentValidation(true));
        assertThat(items.countDocuments()).isEqualTo(2);
    }

    @Test
    void collMod_setsTheValidator_andWarnStoresTheDocument() {
        MongoDatabase database = client.getDatabase("schema");
        MongoCollection<Document> later = database.getCollection("later");
        later.insertOne(new Document("_id", 1));
        database.runCommand(new Document("collMod", "later").append("validator", SCHEMA));
        assertThatThrownBy(() -> later.insertOne(new Document("_id", 2)))
                .isInstanceOfSatisfying(
                        MongoWriteException.class, e -> assertThat(e.getCode()).isEqualTo(121));

        database.runCommand(
                new Document("collMod", "later").append("validationAction", ValidationAction.WARN.getValue()));
        later.insertOne(new Document("_id", 3));
        assertThat(later.countDocuments()).isEqualTo(2);

        assertThatThrownBy(() -> database.runCommand(new Document("collMod", "missing").append("validator", SCHEMA)))
                .isInstanceOfSatisfying(
                        MongoCommandException.class,
                        e -> assertThat(e.getErrorCode()).isEqualTo(26));
    }
}
