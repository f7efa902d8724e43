package io.github.mongowriteguard.testkit.engine;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.mongodb.MongoCommandException;
import com.mongodb.MongoWriteException;
import com.mongodb.client.ClientSession;
import com.mongodb.client.MongoClient;
import com.mongodb.client.MongoCollection;
import com.mongodb.client.MongoDatabase;
import com.mongodb.client.model.CreateCollectionOptions;
import com.mongodb.client.model.Filters;
import com.mongodb.client.model.Updates;
import com.mongodb.client.model.ValidationOptions;
import io.github.mongowriteguard.testkit.Clients;
import io.github.mongowriteguard.testkit.EmulatedCluster;
import io.github.mongowriteguard.testkit.EmulatedReplicaSet;
import java.util.ArrayList;
import java.util.List;
import java.util.function.BiConsumer;
import org.bson.BsonDocument;
import org.bson.BsonInt32;
import org.bson.Document;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * {@code $jsonSchema} validators inside a multi-document transaction, as mongod checks them there: the validator belongs
 * to the collection ({@code src/mongo/db/catalog/collection_impl.cpp}, {@code checkValidation}), so a refused document
 * is {@code DocumentValidationFailure} (121) with {@code errInfo} as outside a transaction; the error is not transient,
 * so {@code src/mongo/db/ops/write_ops_exec.cpp} ({@code handleError}) reports it as the statement's write error and
 * aborts the transaction: its earlier writes are gone and its commit is {@code NoSuchTransaction} (251). A refused
 * {@code findAndModify} is the command's error, with {@code errInfo}, and aborts it too.
 */
class TransactionValidationTest {
    private static final BsonDocument SCHEMA =
            BsonDocument.parse("{$jsonSchema: {required: ['qty'], properties: {qty: {bsonType: 'int', minimum: 0}}}}");
    private static EmulatedReplicaSet set;
    private static MongoClient client;
    private static MongoDatabase database;

    @BeforeAll
    static void start() {
        set = EmulatedCluster.replicaSet().start();
        client = Clients.client(set.connectionString());
        database = client.getDatabase("transaction_validation");
    }

    @AfterAll
    static void stop() {
        client.close();
        set.close();
    }

    private static MongoCollection<Document> validated(String name) {
        database.createCollection(
                name, new CreateCollectionOptions().validationOptions(new ValidationOptions().validator(SCHEMA)));
        MongoCollection<Document> collection = database.getCollection(name);
        collection.insertOne(new Document("_id", 1).append("qty", 5));
        return collection;
    }

    private static List<Document> all(MongoCollection<Document> collection) {
        return collection.find().sort(new Document("_id", 1)).into(new ArrayList<>());
    }

    /** Runs a valid insert, then {@code refused} in one transaction; returns what {@code refused} threw. */
    private static Throwable inTransaction(
            MongoCollection<Document> items, BiConsumer<ClientSession, MongoCollection<Document>> refused) {
        try (ClientSession session = client.startSession()) {
            session.startTransaction();
            items.insertOne(session, new Document("_id", 2).append("qty", 1));
            Throwable thrown = null;
            try {
                refused.accept(session, items);
            } catch (RuntimeException e) {
                thrown = e;
            }
            assertThatThrownBy(session::commitTransaction)
                    .isInstanceOfSatisfying(
                            MongoCommandException.class,
                            e -> assertThat(e.getErrorCode()).isEqualTo(251));
            return thrown;
        }
    }

    @Test
    void aRefusedInsertOrUpdate_isAWriteErrorWithErrInfo_andAbortsTheTransaction() {
        MongoCollection<Document> items = validated("writes");
        List<Document> before = all(items);

        Throwable insert = inTransaction(items, (s, c) -> c.insertOne(s, new Document("_id", 3).append("qty", -1)));
        Throwable update = inTransaction(items, (s, c) -> c.updateOne(s, Filters.eq("_id", 1), Updates.unset("qty")));

        assertThat(insert).isInstanceOfSatisfying(MongoWriteException.class, e -> {
            assertThat(e.getCode()).isEqualTo(121);
            assertThat(e.getError().getMessage()).isEqualTo("Document failed validation");
            assertThat(e.getError().getDetails().get("failingDocumentId")).isEqualTo(new BsonInt32(3));
            assertThat(e.getError()
                            .getDetails()
                            .getDocument("details")
                            .getString("operatorName")
                            .getValue())
                    .isEqualTo("$jsonSchema");
        });
        assertThat(update).isInstanceOfSatisfying(MongoWriteException.class, e -> {
            assertThat(e.getCode()).isEqualTo(121);
            assertThat(e.getError().getDetails().get("failingDocumentId")).isEqualTo(new BsonInt32(1));
        });
        assertThat(all(items)).isEqualTo(before);
    }

    @Test
    void aRefusedFindAndModify_isTheCommandsErrorWithErrInfo_andAbortsTheTransaction() {
        MongoCollection<Document> items = validated("find_and_modify");
        List<Document> before = all(items);

        Throwable thrown =
                inTransaction(items, (s, c) -> c.findOneAndUpdate(s, Filters.eq("_id", 1), Updates.set("qty", "many")));

        assertThat(thrown).isInstanceOfSatisfying(MongoCommandException.class, e -> {
            assertThat(e.getErrorCode()).isEqualTo(121);
            assertThat(e.getResponse().getDocument("errInfo").get("failingDocumentId"))
                    .isEqualTo(new BsonInt32(1));
        });
        assertThat(all(items)).isEqualTo(before);
    }

    @Test
    void aValidTransaction_onAValidatedCollection_commits() {
        MongoCollection<Document> items = validated("valid");
        try (ClientSession session = client.startSession()) {
            session.startTransaction();
            items.insertOne(session, new Document("_id", 2).append("qty", 1));
            items.updateOne(session, Filters.eq("_id", 1), Updates.set("qty", 6));
            session.commitTransaction();
        }
        assertThat(all(items)).extracting(d -> d.get("qty")).containsExactly(6, 1);
    }
}
