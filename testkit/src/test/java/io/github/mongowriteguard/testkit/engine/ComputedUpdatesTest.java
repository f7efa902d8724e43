package io.github.mongowriteguard.testkit.engine;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.mongodb.MongoBulkWriteException;
import com.mongodb.MongoCommandException;
import com.mongodb.MongoWriteException;
import com.mongodb.client.ClientSession;
import com.mongodb.client.MongoClient;
import com.mongodb.client.MongoCollection;
import com.mongodb.client.MongoDatabase;
import com.mongodb.client.model.BulkWriteOptions;
import com.mongodb.client.model.CreateCollectionOptions;
import com.mongodb.client.model.FindOneAndUpdateOptions;
import com.mongodb.client.model.ReturnDocument;
import com.mongodb.client.model.UpdateOneModel;
import com.mongodb.client.model.UpdateOptions;
import com.mongodb.client.model.Updates;
import com.mongodb.client.model.ValidationOptions;
import com.mongodb.client.result.UpdateResult;
import io.github.mongowriteguard.testkit.Clients;
import io.github.mongowriteguard.testkit.EmulatedCluster;
import io.github.mongowriteguard.testkit.EmulatedReplicaSet;
import io.github.mongowriteguard.testkit.EmulatedShardedCluster;
import io.github.mongowriteguard.testkit.sharding.ShardKey;
import java.util.List;
import org.bson.BsonDocument;
import org.bson.BsonInt32;
import org.bson.BsonString;
import org.bson.Document;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * {@code $bit} and pipeline updates, which mongo-java-server's engine cannot apply, through the real driver as mongod
 * applies them: {@code src/mongo/db/update/bit_node.cpp} ({@code and}/{@code or}/{@code xor} on int32/int64, a missing
 * field starting at int32 0, {@code BadValue} 2 for non-integral values and bad specifications) and
 * {@code src/mongo/db/update/pipeline_executor.cpp} (the stages allowed in an update, {@code InvalidOptions} 72 for the
 * others, the result replacing the document with its {@code _id} kept, {@code ImmutableField} 66 when the pipeline
 * changes it).
 */
class ComputedUpdatesTest {
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

    private static MongoCollection<Document> collection(String name, Document... documents) {
        MongoCollection<Document> collection =
                client.getDatabase("computed_updates").getCollection(name);
        collection.insertMany(List.of(documents));
        return collection;
    }

    private static Document byId(MongoCollection<Document> collection, Object id) {
        return collection.find(new Document("_id", id)).first();
    }

    @Test
    void bit_andOrXor_onInt32AndInt64_inOrder_withAMissingFieldStartingAtInt32Zero() {
        MongoCollection<Document> flags = collection(
                "bits",
                new Document("_id", 1).append("f", 13),
                new Document("_id", 2).append("f", 13L),
                new Document("_id", 3));

        UpdateResult and = flags.updateOne(new Document("_id", 1), Updates.bitwiseAnd("f", 10));
        assertThat(and.getModifiedCount()).isEqualTo(1);
        assertThat(byId(flags, 1).get("f")).isEqualTo(8); // 1101 & 1010, still an int32

        flags.updateOne(new Document("_id", 2), Updates.bitwiseOr("f", 2));
        assertThat(byId(flags, 2).get("f")).isEqualTo(15L); // an int64 stays an int64

        flags.updateOne(new Document("_id", 1), Updates.bitwiseXor("f", 1L));
        assertThat(byId(flags, 1).get("f")).isEqualTo(9L); // int32 with an int64 operand: int64 (SafeNum)

        // several operations on one field apply in the order given; a missing field starts at int32 0
        flags.updateOne(
                new Document("_id", 3),
                new Document("$bit", new Document("g", new Document("or", 6).append("and", 3)))
                        .append("$set", new Document("h", 1)));
        assertThat(byId(flags, 3))
                .isEqualTo(new Document("_id", 3).append("g", 2).append("h", 1));

        // a result equal to the value is not a modification
        UpdateResult noOp = flags.updateOne(new Document("_id", 3), Updates.bitwiseOr("g", 2));
        assertThat(noOp.getMatchedCount()).isEqualTo(1);
        assertThat(noOp.getModifiedCount()).isZero();

        // updateMany, and an upsert (the new field is op(0))
        flags.updateMany(new Document("_id", new Document("$in", List.of(1, 2))), Updates.bitwiseAnd("f", 1));
        assertThat(byId(flags, 1).get("f")).isEqualTo(1L);
        assertThat(byId(flags, 2).get("f")).isEqualTo(1L);
        UpdateResult upsert = flags.updateOne(
                new Document("_id", 4).append("k", "a"), Updates.bitwiseXor("f", 5), new UpdateOptions().upsert(true));
        assertThat(upsert.getUpsertedId()).isEqualTo(new BsonInt32(4));
        assertThat(byId(flags, 4))
                .isEqualTo(new Document("_id", 4).append("k", "a").append("f", 5));
    }

    @Test
    void bit_refusesNonIntegralValues_andBadSpecifications_withTheServersBadValue() {
        MongoCollection<Document> flags = collection(
                "bitErrors", new Document("_id", 1).append("f", "x"), new Document("_id", 2).append("f", 1.5));

        assertThatThrownBy(() -> flags.updateOne(new Document("_id", 1), Updates.bitwiseAnd("f", 1)))
                .isInstanceOfSatisfying(MongoWriteException.class, e -> {
                    assertThat(e.getError().getCode()).isEqualTo(2);
                    assertThat(e.getError().getMessage())
                            .startsWith("Cannot apply $bit to a value of non-integral type.")
                            .endsWith("has the field f of non-integer type string");
                });
        assertThatThrownBy(() -> flags.updateOne(new Document("_id", 2), Updates.bitwiseOr("f", 1)))
                .isInstanceOfSatisfying(
                        MongoWriteException.class,
                        e -> assertThat(e.getError().getMessage()).endsWith("of non-integer type double"));
        // the operand must be an int32 or int64, even when nothing matches
        assertThatThrownBy(() -> flags.updateOne(
                        new Document("_id", 99), new Document("$bit", new Document("f", new Document("and", 1.0)))))
                .isInstanceOfSatisfying(MongoWriteException.class, e -> {
                    assertThat(e.getError().getCode()).isEqualTo(2);
                    assertThat(e.getError().getMessage())
                            .startsWith("The $bit modifier field must be an Integer(32/64 bit); a 'double'");
                });
        assertThatThrownBy(() -> flags.updateOne(
                        new Document("_id", 99), new Document("$bit", new Document("f", new Document("nand", 1)))))
                .isInstanceOfSatisfying(
                        MongoWriteException.class,
                        e -> assertThat(e.getError().getMessage())
                                .startsWith("The $bit modifier only supports 'and', 'or', and 'xor', not 'nand'"));
        assertThatThrownBy(() -> flags.updateOne(new Document("_id", 99), new Document("$bit", new Document("f", 1))))
                .isInstanceOfSatisfying(
                        MongoWriteException.class,
                        e -> assertThat(e.getError().getMessage())
                                .startsWith("The $bit modifier is not compatible with a int."));
        assertThatThrownBy(() -> flags.updateOne(
                        new Document("_id", 99), new Document("$bit", new Document("f", new Document()))))
                .isInstanceOfSatisfying(
                        MongoWriteException.class,
                        e -> assertThat(e.getError().getMessage())
                                .startsWith("You must pass in at least one bitwise operation."));
        assertThat(byId(flags, 1).get("f")).isEqualTo("x");
    }

    @Test
    void pipelineUpdates_runTheAllowedStages_onEachMatchedDocument_keepingItsId() {
        MongoCollection<Document> orders = collection(
                "pipeline",
                new Document("_id", 1).append("a", 2).append("b", 3).append("tmp", true),
                new Document("_id", 2).append("a", 10).append("b", 1).append("tmp", true),
                new Document("_id", 3).append("a", 0).append("b", 0));

        UpdateResult many = orders.updateMany(
                new Document("tmp", true),
                List.of(
                        new Document("$set", new Document("total", new Document("$add", List.of("$a", "$b")))),
                        new Document("$unset", "tmp"),
                        new Document(
                                "$addFields", new Document("twice", new Document("$multiply", List.of("$total", 2))))));
        assertThat(many.getMatchedCount()).isEqualTo(2);
        assertThat(many.getModifiedCount()).isEqualTo(2);
        assertThat(byId(orders, 1))
                .isEqualTo(new Document("_id", 1)
                        .append("a", 2)
                        .append("b", 3)
                        .append("total", 5)
                        .append("twice", 10));
        assertThat(byId(orders, 3))
                .isEqualTo(new Document("_id", 3).append("a", 0).append("b", 0));

        // $replaceWith / $replaceRoot / $project drop fields; the _id is kept when the pipeline drops it
        orders.updateOne(new Document("_id", 2), List.of(new Document("$replaceWith", new Document("sum", "$total"))));
        assertThat(byId(orders, 2)).isEqualTo(new Document("_id", 2).append("sum", 11));
        orders.updateOne(new Document("_id", 1), List.of(new Document("$project", new Document("a", 1))));
        assertThat(byId(orders, 1)).isEqualTo(new Document("_id", 1).append("a", 2));
        orders.updateOne(
                new Document("_id", 3),
                List.of(new Document("$replaceRoot", new Document("newRoot", new Document("z", "$a")))));
        assertThat(byId(orders, 3)).isEqualTo(new Document("_id", 3).append("z", 0));

        // a pipeline that leaves the document as it was is no modification
        UpdateResult same =
                orders.updateOne(new Document("_id", 3), List.of(new Document("$set", new Document("z", 0))));
        assertThat(same.getMatchedCount()).isEqualTo(1);
        assertThat(same.getModifiedCount()).isZero();
    }

    @Test
    void pipelineUpdates_upsert_fromTheQuerysEqualityFields() {
        MongoCollection<Document> counters = collection("pipelineUpsert", new Document("_id", 0));

        UpdateResult upsert = counters.updateOne(
                new Document("_id", 7).append("kind", "x"),
                List.of(new Document("$set", new Document("label", new Document("$concat", List.of("$kind", "-1"))))),
                new UpdateOptions().upsert(true));
        assertThat(upsert.getUpsertedId()).isEqualTo(new BsonInt32(7));
        assertThat(byId(counters, 7))
                .isEqualTo(new Document("_id", 7).append("kind", "x").append("label", "x-1"));
    }

    @Test
    void pipelineUpdates_refuseStagesNotAllowedInAnUpdate_andAChangedId() {
        MongoCollection<Document> items = collection("pipelineErrors", new Document("_id", 1).append("v", 1));

        assertThatThrownBy(() ->
                        items.updateOne(new Document("_id", 1), List.of(new Document("$match", new Document("v", 1)))))
                .isInstanceOfSatisfying(MongoWriteException.class, e -> {
                    assertThat(e.getError().getCode()).isEqualTo(72);
                    assertThat(e.getError().getMessage())
                            .isEqualTo("$match is not allowed to be used within an update");
                });
        assertThatThrownBy(() ->
                        items.updateOne(new Document("_id", 1), List.of(new Document("$set", new Document("_id", 2)))))
                .isInstanceOfSatisfying(
                        MongoWriteException.class,
                        e -> assertThat(e.getError().getCode()).isEqualTo(66));
        assertThat(byId(items, 1)).isEqualTo(new Document("_id", 1).append("v", 1));
        assertThat(byId(items, 2)).isNull();
        // arrayFilters name $[<identifier>] elements, which a pipeline has not (update_driver.cpp)
        assertThatThrownBy(() -> items.updateOne(
                        new Document("_id", 1),
                        List.of(new Document("$set", new Document("w", 1))),
                        new UpdateOptions().arrayFilters(List.of(new Document("e", 1)))))
                .isInstanceOfSatisfying(MongoWriteException.class, e -> {
                    assertThat(e.getError().getCode()).isEqualTo(9);
                    assertThat(e.getError().getMessage())
                            .isEqualTo("arrayFilters may not be specified for pipeline-style updates");
                });
        assertThatThrownBy(() -> items.findOneAndUpdate(
                        new Document("_id", 1),
                        List.of(new Document("$set", new Document("w", 1))),
                        new FindOneAndUpdateOptions().arrayFilters(List.of(new Document("e", 1)))))
                .isInstanceOfSatisfying(
                        MongoCommandException.class,
                        e -> assertThat(e.getErrorMessage())
                                .isEqualTo("Cannot specify arrayFilters and a pipeline update"));
        assertThat(byId(items, 1)).isEqualTo(new Document("_id", 1).append("v", 1));
        // variables are not emulated: said so, never run without them
        assertThatThrownBy(() -> items.updateOne(
                        new Document("_id", 1),
                        List.of(new Document("$set", new Document("w", "$$x"))),
                        new UpdateOptions().let(new Document("x", 1))))
                .isInstanceOfSatisfying(
                        MongoWriteException.class,
                        e -> assertThat(e.getError().getMessage()).contains("does not emulate variables"));
        assertThat(byId(items, 1)).isEqualTo(new Document("_id", 1).append("v", 1));

        // in a bulk: the refused statement is a write error at its index, the others apply (unordered)
        assertThatThrownBy(() -> items.bulkWrite(
                        List.of(
                                new UpdateOneModel<>(
                                        new Document("_id", 1), List.of(new Document("$sort", new Document("v", 1)))),
                                new UpdateOneModel<Document>(new Document("_id", 1), Updates.bitwiseOr("v", 4))),
                        new BulkWriteOptions().ordered(false)))
                .isInstanceOfSatisfying(MongoBulkWriteException.class, e -> {
                    assertThat(e.getWriteErrors()).hasSize(1);
                    assertThat(e.getWriteErrors().get(0).getIndex()).isZero();
                    assertThat(e.getWriteErrors().get(0).getCode()).isEqualTo(72);
                    assertThat(e.getWriteResult().getModifiedCount()).isEqualTo(1);
                });
        assertThat(byId(items, 1).get("v")).isEqualTo(5);
    }

    @Test
    void findAndModify_withAPipeline_orBit_returnsTheDocumentBeforeOrAfter_andUpserts() {
        MongoCollection<Document> items = collection(
                "findAndModify", new Document("_id", 1).append("v", 1), new Document("_id", 2).append("v", 1));

        Document after = items.findOneAndUpdate(
                new Document("v", 1),
                List.of(new Document("$set", new Document("w", new Document("$add", List.of("$v", 1))))),
                new FindOneAndUpdateOptions().sort(new Document("_id", -1)).returnDocument(ReturnDocument.AFTER));
        assertThat(after).isEqualTo(new Document("_id", 2).append("v", 1).append("w", 2));

        Document before = items.findOneAndUpdate(new Document("_id", 1), Updates.bitwiseXor("v", 3));
        assertThat(before).isEqualTo(new Document("_id", 1).append("v", 1));
        assertThat(byId(items, 1).get("v")).isEqualTo(2);

        assertThat(items.findOneAndUpdate(new Document("_id", 9), List.of(new Document("$set", new Document("x", 1)))))
                .isNull();
        assertThat(byId(items, 9)).isNull();
        Document upserted = items.findOneAndUpdate(
                new Document("_id", 9),
                List.of(new Document("$set", new Document("x", 1))),
                new FindOneAndUpdateOptions().upsert(true).returnDocument(ReturnDocument.AFTER));
        assertThat(upserted).isEqualTo(new Document("_id", 9).append("x", 1));

        assertThatThrownBy(() -> items.findOneAndUpdate(
                        new Document("_id", 1), List.of(new Document("$group", new Document("_id", null)))))
                .isInstanceOfSatisfying(
                        MongoCommandException.class,
                        e -> assertThat(e.getErrorCode()).isEqualTo(72));
    }

    @Test
    void pipelineUpdates_areCheckedByTheValidator_andRunInsideATransaction() {
        MongoDatabase database = client.getDatabase("computed_updates");
        database.createCollection(
                "validatedPipeline",
                new CreateCollectionOptions()
                        .validationOptions(new ValidationOptions()
                                .validator(BsonDocument.parse(
                                        "{$jsonSchema: {properties: {qty: {bsonType: 'int', minimum: 0}}}}"))));
        MongoCollection<Document> items = database.getCollection("validatedPipeline");
        items.insertOne(new Document("_id", 1).append("qty", 1));

        // the document the pipeline produces is what the validator sees (collection_write_path.cpp)
        assertThatThrownBy(() -> items.updateOne(
                        new Document("_id", 1),
                        List.of(new Document(
                                "$set", new Document("qty", new Document("$subtract", List.of("$qty", 5)))))))
                .isInstanceOfSatisfying(
                        MongoWriteException.class,
                        e -> assertThat(e.getError().getCode()).isEqualTo(121));
        assertThat(byId(items, 1)).isEqualTo(new Document("_id", 1).append("qty", 1));

        try (ClientSession session = client.startSession()) {
            session.withTransaction(() -> {
                items.updateOne(
                        session,
                        new Document("_id", 1),
                        List.of(new Document("$set", new Document("qty", new Document("$add", List.of("$qty", 1))))));
                items.updateOne(session, new Document("_id", 1), Updates.bitwiseOr("flags", 4));
                return null;
            });
        }
        assertThat(byId(items, 1))
                .isEqualTo(new Document("_id", 1).append("qty", 2).append("flags", 4));
    }

    @Test
    void pipelineAndBitUpdates_throughMongos_onAHashedCollection() {
        try (EmulatedShardedCluster cluster =
                        EmulatedCluster.sharded().shards(3).start();
                MongoClient mongos = Clients.client(cluster.connectionString())) {
            cluster.shardCollection(
                    "computed_updates.sharded", ShardKey.of(new BsonDocument("_id", new BsonString("hashed"))));
            MongoCollection<Document> items =
                    mongos.getDatabase("computed_updates").getCollection("sharded");
            for (int i = 0; i < 6; i++) {
                items.insertOne(new Document("_id", i).append("v", i));
            }

            UpdateResult many = items.updateMany(
                    new Document(),
                    List.of(new Document("$set", new Document("w", new Document("$multiply", List.of("$v", 10))))));
            assertThat(many.getModifiedCount()).isEqualTo(6);
            items.updateOne(new Document("_id", 3), Updates.bitwiseXor("v", 1));
            Document after = items.findOneAndUpdate(
                    new Document("_id", 4),
                    List.of(new Document("$unset", "w")),
                    new FindOneAndUpdateOptions().returnDocument(ReturnDocument.AFTER));

            assertThat(after).isEqualTo(new Document("_id", 4).append("v", 4));
            assertThat(byId(items, 3))
                    .isEqualTo(new Document("_id", 3).append("v", 2).append("w", 30));
            assertThat(byId(items, 5))
                    .isEqualTo(new Document("_id", 5).append("v", 5).append("w", 50));
        }
    }
}
