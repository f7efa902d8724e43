package io.github.mongowriteguard.internal.plan;

import static org.assertj.core.api.Assertions.assertThat;

import com.mongodb.MongoClientSettings;
import com.mongodb.client.model.InsertOneModel;
import java.util.ArrayList;
import java.util.List;
import org.bson.BsonDocument;
import org.bson.BsonObjectId;
import org.bson.BsonString;
import org.bson.Document;
import org.bson.codecs.configuration.CodecRegistries;
import org.bson.codecs.configuration.CodecRegistry;
import org.bson.codecs.pojo.PojoCodecProvider;
import org.bson.codecs.pojo.annotations.BsonId;
import org.bson.types.ObjectId;
import org.junit.jupiter.api.Test;

/** How inserts without {@code _id} get one before planning. */
class IdAssignmentTest {

    private static final CodecRegistry POJO_REGISTRY = CodecRegistries.fromRegistries(
            MongoClientSettings.getDefaultCodecRegistry(),
            CodecRegistries.fromProviders(
                    PojoCodecProvider.builder().automatic(true).build()));

    /** A mutable POJO: the driver's POJO codec sets a generated ObjectId into {@code id}. */
    public static final class Order {
        private ObjectId id;
        private String item;

        public Order() {}

        Order(String item) {
            this.item = item;
        }

        public ObjectId getId() {
            return id;
        }

        public void setId(ObjectId id) {
            this.id = id;
        }

        public String getItem() {
            return item;
        }

        public void setItem(String item) {
            this.item = item;
        }
    }

    /** An immutable record: it cannot keep a generated id. */
    public record Event(@BsonId ObjectId id, String name) {}

    @Test
    void bsonDocumentWithoutId_getsAnObjectId() {
        BsonDocument document = BsonDocument.parse("{v: 1}");

        PlannedBulk plan = BulkPlanner.of(BsonDocument.class, MongoClientSettings.getDefaultCodecRegistry())
                .plan(List.of(new InsertOneModel<>(document)), PlanOptions.ordered());

        assertThat(document.get("_id")).isInstanceOf(BsonObjectId.class);
        assertThat(plan.decision(0).id()).contains(document.get("_id"));
    }

    @Test
    void pojoWithoutId_getsOneFromThePojoCodec() {
        Order order = new Order("book");

        PlannedBulk plan = BulkPlanner.of(Order.class, POJO_REGISTRY)
                .plan(List.of(new InsertOneModel<>(order)), PlanOptions.ordered());

        assertThat(order.getId()).isNotNull();
        assertThat(plan.decision(0).id()).contains(new BsonObjectId(order.getId()));
    }

    @Test
    void pojoWithId_keepsIt_andIsKeyedByIt() {
        Order order = new Order("book");
        ObjectId id = new ObjectId();
        order.setId(id);

        PlannedBulk plan = BulkPlanner.of(Order.class, POJO_REGISTRY)
                .plan(List.of(new InsertOneModel<>(order)), PlanOptions.ordered());

        assertThat(order.getId()).isEqualTo(id);
        assertThat(plan.decision(0).id()).contains(new BsonObjectId(id));
    }

    @Test
    void immutableRecordWithoutId_getsAnObjectIdSentAfterItsFields_asTheDriverAddsOne_theRecordUnchanged() {
        Event event = new Event(null, "created");

        PlannedBulk plan = BulkPlanner.of(Event.class, POJO_REGISTRY)
                .plan(
                        List.of(new InsertOneModel<>(event), new InsertOneModel<>(new Event(null, "again"))),
                        PlanOptions.ordered());

        assertThat(plan.decision(0).isKeyed()).isTrue();
        assertThat(plan.decision(0).id()).get().isInstanceOf(BsonObjectId.class);
        assertThat(plan.appendedId(0)).isEqualTo(plan.decision(0).id());
        assertThat(plan.id(1)).isNotEqualTo(plan.id(0));
        assertThat(plan.hasOwnAssignedId(0)).isTrue();
        assertThat(event).isEqualTo(new Event(null, "created"));
        assertThat(plan.rounds()).hasSize(1);
    }

    @Test
    void customAssigner_isCalledOnlyForDocumentsWithoutId_andKeysTheInsert() {
        List<Document> asked = new ArrayList<>();
        IdAssigner<Document> byOrderNumber = document -> {
            asked.add(document);
            document.put("_id", "order-" + document.getInteger("number"));
            return new BsonString("order-" + document.getInteger("number"));
        };
        Document withoutId = new Document("number", 7);

        PlannedBulk plan = BulkPlanner.of(Document.class, MongoClientSettings.getDefaultCodecRegistry(), byOrderNumber)
                .plan(
                        List.of(
                                new InsertOneModel<>(new Document("_id", "x")),
                                new InsertOneModel<>(withoutId),
                                Models.update("order-7")),
                        PlanOptions.ordered());

        assertThat(asked).containsExactly(withoutId);
        assertThat(plan.decision(1).id()).contains(new BsonString("order-7"));
        assertThat(plan.previousOnKey(2)).isEqualTo(1);
    }

    @Test
    void noneAssigner_leavesDocumentsAsTheyAre() {
        Document withoutId = new Document("v", 1);

        BulkPlanner.of(Document.class, MongoClientSettings.getDefaultCodecRegistry(), IdAssigner.none())
                .plan(List.of(new InsertOneModel<>(withoutId)), PlanOptions.ordered());

        assertThat(withoutId).doesNotContainKey("_id");
    }

    @Test
    void forCollection_usesTheCollectionsClassAndRegistry() {
        // A MongoCollection is only read for its document class and registry: no server needed.
        try (var client = com.mongodb.client.MongoClients.create("mongodb://localhost:1/?serverSelectionTimeoutMS=1")) {
            var collection = client.getDatabase("db").getCollection("c");
            Document withoutId = new Document("v", 1);

            BulkPlanner.forCollection(collection).plan(List.of(new InsertOneModel<>(withoutId)), PlanOptions.ordered());

            assertThat(withoutId.get("_id")).isInstanceOf(ObjectId.class);
        }
    }
}
