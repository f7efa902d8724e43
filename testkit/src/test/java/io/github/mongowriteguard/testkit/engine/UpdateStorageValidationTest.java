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
import com.mongodb.client.model.Filters;
import com.mongodb.client.model.UpdateOneModel;
import com.mongodb.client.model.UpdateOptions;
import com.mongodb.client.model.Updates;
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
 * The documents updates and replacements produce, checked for storage as mongod checks them
 * ({@code src/mongo/db/update/storage_validation.cpp}, {@code storageValid}; the limit from
 * {@code src/mongo/bson/bson_depth.h}, {@code BSONDepth::getMaxDepthForUserStorage()}, 180): an element deeper than
 * 180 levels is {@code Overflow} (15), a top-level {@code $} field is {@code DollarPrefixedFieldName} (52), the
 * document is left as it was, and a statement that writes no document is not checked. Through the real driver; a
 * replacement with a top-level {@code $} field, which the driver refuses to send, through {@code runCommand}.
 */
class UpdateStorageValidationTest {
    private static EmulatedReplicaSet set;
    private static MongoClient client;
    private static MongoDatabase database;

    @BeforeAll
    static void start() {
        set = EmulatedCluster.replicaSet().start();
        client = Clients.client(set.connectionString());
        database = client.getDatabase("storage_validation");
    }

    @AfterAll
    static void stop() {
        client.close();
        set.close();
    }

    private static MongoCollection<Document> fresh(String name) {
        MongoCollection<Document> collection = database.getCollection(name);
        collection.drop();
        collection.insertMany(List.of(new Document("_id", 1).append("v", 1), new Document("_id", 2).append("v", 2)));
        return collection;
    }

    private static List<Document> all(MongoCollection<Document> collection) {
        return collection.find().sort(new Document("_id", 1)).into(new ArrayList<>());
    }

    /** A value whose elements nest {@code levels} deep: {a: {a: ... {x: 1}}}, {@code levels} documents. */
    private static Document nested(int levels) {
        Document inner = new Document("x", 1);
        for (int level = 1; level < levels; level++) {
            inner = new Document("a", inner);
        }
        return inner;
    }

    @Test
    void anUpdateWhoseDocumentNestsPast180Levels_isOverflow_andChangesNothing() {
        MongoCollection<Document> items = fresh("depth");
        List<Document> before = all(items);

        // {v: <179 levels>}: the deepest element is at level 180, which mongod stores
        items.updateOne(Filters.eq("_id", 1), Updates.set("v", nested(179)));
        assertThatThrownBy(() -> items.updateOne(Filters.eq("_id", 2), Updates.set("v", nested(180))))
                .isInstanceOfSatisfying(MongoWriteException.class, e -> {
                    assertThat(e.getCode()).isEqualTo(15);
                    assertThat(e.getError().getMessage()).isEqualTo("Document exceeds maximum nesting depth of 180");
                });
        // a dotted path counts each of its fields; $push one more for the array
        assertThatThrownBy(() -> items.updateOne(Filters.eq("_id", 2), Updates.set("p.q", nested(179))))
                .isInstanceOfSatisfying(
                        MongoWriteException.class, e -> assertThat(e.getCode()).isEqualTo(15));
        assertThatThrownBy(() -> items.updateOne(Filters.eq("_id", 2), Updates.push("list", nested(179))))
                .isInstanceOfSatisfying(
                        MongoWriteException.class, e -> assertThat(e.getCode()).isEqualTo(15));
        assertThatThrownBy(() -> items.replaceOne(Filters.eq("_id", 2), new Document("w", nested(180))))
                .isInstanceOfSatisfying(
                        MongoWriteException.class, e -> assertThat(e.getCode()).isEqualTo(15));
        assertThatThrownBy(() -> items.findOneAndUpdate(Filters.eq("_id", 2), Updates.set("v", nested(180))))
                .isInstanceOfSatisfying(MongoCommandException.class, e -> {
                    assertThat(e.getErrorCode()).isEqualTo(15);
                    assertThat(e.getErrorCodeName()).isEqualTo("Overflow");
                });

        List<Document> after = all(items);
        assertThat(after.get(1)).isEqualTo(before.get(1));
        assertThat(after.get(0).get("v")).isEqualTo(nested(179));
    }

    @Test
    void aTopLevelDollarField_inAReplacementOrMadeByAnOperator_isDollarPrefixedFieldName() {
        MongoCollection<Document> items = fresh("dollar");
        List<Document> before = all(items);

        assertThatThrownBy(() -> items.updateOne(Filters.eq("_id", 1), Updates.set("$z", 1)))
                .isInstanceOfSatisfying(MongoWriteException.class, e -> {
                    assertThat(e.getCode()).isEqualTo(52);
                    assertThat(e.getError().getMessage())
                            .isEqualTo("The dollar ($) prefixed field '$z' in '$z' is not allowed in the context of"
                                    + " an update's replacement document. Consider using an aggregation pipeline"
                                    + " with $replaceWith.");
                });
        // a replacement: its first field has no $ (mongod reads one whose first field has $ as an operator update)
        BsonDocument reply = database.runCommand(BsonDocument.parse(
                        "{update: 'dollar', updates: [{q: {_id: 2}, u: {w: 1, $x: 1}}], ordered: true}"))
                .toBsonDocument();
        assertThat(reply.getArray("writeErrors")
                        .get(0)
                        .asDocument()
                        .getInt32("code")
                        .getValue())
                .isEqualTo(52);
        assertThat(reply.getInt32("n").getValue()).isZero();
        assertThatThrownBy(() -> database.runCommand(
                        BsonDocument.parse("{findAndModify: 'dollar', query: {_id: 2}, update: {w: 1, $x: 1}}")))
                .isInstanceOfSatisfying(
                        MongoCommandException.class,
                        e -> assertThat(e.getErrorCode()).isEqualTo(52));
        assertThat(all(items)).isEqualTo(before);

        // nested $ fields are stored (servers 5.0+ check only the top level)
        items.updateOne(Filters.eq("_id", 1), Updates.set("a", new Document("$b", 1)));
        assertThat(all(items).get(0).get("a")).isEqualTo(new Document("$b", 1));
    }

    @Test
    void aStatementThatWritesNoDocument_isNotChecked_andAnUpsertOrSetOnInsertOnlyWhenItInserts() {
        MongoCollection<Document> items = fresh("unwritten");

        assertThat(items.updateOne(Filters.eq("_id", 99), Updates.set("$z", 1)).getMatchedCount())
                .isZero();
        // $setOnInsert applies only to an insert: a matched document is not checked for it
        items.updateOne(Filters.eq("_id", 1), Updates.setOnInsert("v", nested(180)), new UpdateOptions().upsert(true));
        assertThatThrownBy(() -> items.updateOne(
                        Filters.eq("_id", 3), Updates.setOnInsert("v", nested(180)), new UpdateOptions().upsert(true)))
                .isInstanceOfSatisfying(
                        MongoWriteException.class, e -> assertThat(e.getCode()).isEqualTo(15));
        assertThat(items.countDocuments()).isEqualTo(2);
    }

    @Test
    void aBulk_reportsTheRefusedStatementAtItsIndex_orderedStopsThere_unorderedGoesOn() {
        MongoCollection<Document> items = fresh("bulk");
        List<UpdateOneModel<Document>> writes = List.of(
                new UpdateOneModel<>(Filters.eq("_id", 1), Updates.set("v", 10)),
                new UpdateOneModel<>(Filters.eq("_id", 2), Updates.set("$z", 1)),
                new UpdateOneModel<>(Filters.eq("_id", 2), Updates.set("v", 20)));

        assertThatThrownBy(() -> items.bulkWrite(writes)).isInstanceOfSatisfying(MongoBulkWriteException.class, e -> {
            assertThat(e.getWriteErrors()).hasSize(1);
            assertThat(e.getWriteErrors().get(0).getIndex()).isEqualTo(1);
            assertThat(e.getWriteErrors().get(0).getCode()).isEqualTo(52);
            assertThat(e.getWriteResult().getModifiedCount()).isEqualTo(1);
        });
        assertThat(all(items)).extracting(d -> d.get("v")).containsExactly(10, 2);

        assertThatThrownBy(() -> items.bulkWrite(writes, new BulkWriteOptions().ordered(false)))
                .isInstanceOfSatisfying(MongoBulkWriteException.class, e -> {
                    assertThat(e.getWriteErrors()).extracting(w -> w.getIndex()).containsExactly(1);
                    assertThat(e.getWriteResult().getMatchedCount()).isEqualTo(2);
                });
        assertThat(all(items)).extracting(d -> d.get("v")).containsExactly(10, 20);
    }
}
