package io.github.mongowriteguard.internal.plan;

import static io.github.mongowriteguard.internal.plan.Models.delete;
import static io.github.mongowriteguard.internal.plan.Models.insert;
import static io.github.mongowriteguard.internal.plan.Models.planUnordered;
import static io.github.mongowriteguard.internal.plan.Models.update;
import static io.github.mongowriteguard.internal.plan.Models.updateMany;
import static org.assertj.core.api.Assertions.assertThat;

import com.mongodb.client.model.Collation;
import com.mongodb.client.model.CollationStrength;
import com.mongodb.client.model.DeleteOneModel;
import com.mongodb.client.model.DeleteOptions;
import com.mongodb.client.model.Filters;
import com.mongodb.client.model.InsertOneModel;
import com.mongodb.client.model.ReplaceOneModel;
import com.mongodb.client.model.ReplaceOptions;
import com.mongodb.client.model.UpdateOneModel;
import com.mongodb.client.model.Updates;
import com.mongodb.client.model.WriteModel;
import io.github.mongowriteguard.bulk.WriteDecision;
import java.util.List;
import java.util.regex.Pattern;
import org.bson.BsonDocument;
import org.bson.BsonInt32;
import org.bson.BsonObjectId;
import org.bson.BsonString;
import org.bson.Document;
import org.bson.types.ObjectId;
import org.junit.jupiter.api.Test;

/** Which writes are keyed, and by which {@code _id}. */
class KeyingTest {

    private static WriteDecision only(WriteModel<Document> model) {
        return planUnordered(List.of(model)).decision(0);
    }

    @Test
    void idEqualityFilter_isKeyedById() {
        WriteDecision decision = only(update(7));

        assertThat(decision.isKeyed()).isTrue();
        assertThat(decision.id()).contains(new BsonInt32(7));
    }

    @Test
    void eqOperatorOnId_isKeyedById() {
        WriteDecision decision = only(new UpdateOneModel<>(Filters.eq("_id", "a"), Updates.set("x", 1)));
        WriteDecision explicitEq = only(new DeleteOneModel<>(new Document("_id", new Document("$eq", "a"))));

        assertThat(decision.id()).contains(new BsonString("a"));
        assertThat(explicitEq.id()).contains(new BsonString("a"));
    }

    @Test
    void idEqualityWithShardKey_isKeyedById_andRecordsTheWholeFilter() {
        WriteDecision decision =
                only(new UpdateOneModel<>(new Document("_id", 7).append("region", "eu"), Updates.set("x", 1)));

        assertThat(decision.isKeyed()).isTrue();
        assertThat(decision.id()).contains(new BsonInt32(7));
        assertThat(decision.filter()).contains(BsonDocument.parse("{_id: 7, region: 'eu'}"));
        assertThat(decision.reason()).contains("its filter has other conditions too");
    }

    @Test
    void embeddedDocumentId_isKeyed() {
        WriteDecision decision = only(update(new Document("order", 1).append("line", 2)));

        assertThat(decision.id()).contains(BsonDocument.parse("{order: 1, line: 2}"));
    }

    @Test
    void insertWithId_isKeyedByItsId() {
        assertThat(only(insert("k")).id()).contains(new BsonString("k"));
    }

    @Test
    void filterWithoutIdEquality_isUnkeyed() {
        List<WriteModel<Document>> unkeyed = List.of(
                new UpdateOneModel<>(new Document("email", "a@b"), Updates.set("x", 1)),
                new UpdateOneModel<>(Filters.in("_id", 1, 2), Updates.set("x", 1)),
                new UpdateOneModel<>(Filters.gt("_id", 1), Updates.set("x", 1)),
                new UpdateOneModel<>(new Document("_id", new Document("$eq", 1).append("$ne", 2)), Updates.set("x", 1)),
                new DeleteOneModel<>(new Document("_id", Pattern.compile("^a"))),
                new DeleteOneModel<>(new Document("_id", List.of(1, 2))),
                new DeleteOneModel<>(Filters.and(Filters.eq("_id", 1))));

        for (WriteDecision decision : planUnordered(unkeyed).decisions()) {
            assertThat(decision.isKeyed()).as(decision.toString()).isFalse();
            assertThat(decision.id()).isEmpty();
            assertThat(decision.reason()).contains("its filter is not an _id equality");
        }
    }

    @Test
    void manyDocumentWrites_areUnkeyed() {
        PlannedBulk plan = planUnordered(List.of(updateMany("new"), Models.deleteMany("old")));

        assertThat(plan.decisions()).allSatisfy(decision -> {
            assertThat(decision.isKeyed()).isFalse();
            assertThat(decision.reason()).contains("can change many documents");
        });
    }

    @Test
    void writeWithCollation_isUnkeyed_butSimpleCollationIsKeyed() {
        Collation caseInsensitive = Collation.builder()
                .locale("en")
                .collationStrength(CollationStrength.SECONDARY)
                .build();
        PlannedBulk plan = planUnordered(List.of(
                new DeleteOneModel<>(new Document("_id", "abc"), new DeleteOptions().collation(caseInsensitive)),
                new DeleteOneModel<>(
                        new Document("_id", "ABC"),
                        new DeleteOptions()
                                .collation(Collation.builder().locale("simple").build()))));

        assertThat(plan.decision(0).isKeyed()).isFalse();
        assertThat(plan.decision(0).reason()).contains("collation");
        assertThat(plan.decision(1).isKeyed()).isTrue();
    }

    @Test
    void numericallyEqualIds_areTheSameKey() {
        PlannedBulk plan = planUnordered(List.of(update(1), delete(1L), update(1.0)));

        assertThat(Models.roundIndices(plan)).containsExactly(List.of(0), List.of(1), List.of(2));
        assertThat(plan.previousOnKey(2)).isEqualTo(1);
    }

    @Test
    void bsonDocumentFilter_isCopied_soLaterChangesDoNotReachThePlan() {
        BsonDocument filter = BsonDocument.parse("{_id: 1}");
        PlannedBulk plan = planUnordered(List.of(new DeleteOneModel<>(filter)));

        filter.put("_id", new BsonInt32(2));

        assertThat(plan.decision(0).id()).contains(new BsonInt32(1));
        assertThat(plan.decision(0).filter()).contains(BsonDocument.parse("{_id: 1}"));
    }

    @Test
    void documentFilterWithNestedValues_isReadThroughTheCodec() {
        WriteDecision decision = only(new ReplaceOneModel<>(
                new Document("_id", 3).append("tags", new Document("$in", List.of("a", "b"))),
                new Document("v", 1),
                new ReplaceOptions()));

        assertThat(decision.id()).contains(new BsonInt32(3));
        assertThat(decision.filter()).contains(BsonDocument.parse("{_id: 3, tags: {$in: ['a', 'b']}}"));
    }

    @Test
    void insertWithoutId_getsAnObjectIdBeforePlanning() {
        Document document = new Document("v", 1);

        WriteDecision decision = only(new InsertOneModel<>(document));

        assertThat(document.get("_id")).isInstanceOf(ObjectId.class);
        assertThat(decision.id()).contains(new BsonObjectId(document.getObjectId("_id")));
    }
}
