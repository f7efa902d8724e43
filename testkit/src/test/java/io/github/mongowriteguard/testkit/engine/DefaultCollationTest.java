package io.github.mongowriteguard.testkit.engine;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.mongodb.MongoCommandException;
import com.mongodb.MongoWriteException;
import com.mongodb.client.MongoClient;
import com.mongodb.client.MongoCollection;
import com.mongodb.client.MongoDatabase;
import com.mongodb.client.model.Collation;
import com.mongodb.client.model.CollationStrength;
import com.mongodb.client.model.CreateCollectionOptions;
import com.mongodb.client.model.Filters;
import com.mongodb.client.model.IndexOptions;
import com.mongodb.client.model.Indexes;
import com.mongodb.client.model.Sorts;
import com.mongodb.client.model.UpdateOptions;
import com.mongodb.client.model.Updates;
import io.github.mongowriteguard.testkit.Clients;
import io.github.mongowriteguard.testkit.EmulatedCluster;
import io.github.mongowriteguard.testkit.EmulatedReplicaSet;
import java.util.ArrayList;
import java.util.List;
import org.bson.Document;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * A collection's default collation ({@code create} with {@code collation}), reported with the server's filled-in
 * specification ({@code src/mongo/db/query/collation/collation_spec.h} {@code CollationSpec::toBSON},
 * {@code src/mongo/db/catalog/collection_options.cpp} {@code appendBSON}) and applied to the commands that name no
 * collation of their own ({@code src/mongo/db/query/collation/collator_interface_icu.cpp}: strings compared at the
 * collation's strength); what the emulator cannot apply is refused, never ignored.
 */
class DefaultCollationTest {
    private static EmulatedReplicaSet set;
    private static MongoClient client;
    private static MongoDatabase db;

    @BeforeAll
    static void start() {
        set = EmulatedCluster.replicaSet().start();
        client = Clients.client(set.connectionString());
        db = client.getDatabase("collation");
    }

    @AfterAll
    static void stop() {
        client.close();
        set.close();
    }

    private static MongoCollection<Document> caseInsensitive(String name, int strength) {
        db.createCollection(
                name,
                new CreateCollectionOptions()
                        .collation(Collation.builder()
                                .locale("en")
                                .collationStrength(
                                        strength == 1 ? CollationStrength.PRIMARY : CollationStrength.SECONDARY)
                                .build()));
        MongoCollection<Document> collection = db.getCollection(name);
        collection.insertMany(List.of(
                new Document("_id", 1).append("name", "Alice"),
                new Document("_id", 2).append("name", "ALICE"),
                new Document("_id", 3).append("name", "Bob"),
                new Document("_id", 4).append("name", "Élodie")));
        return collection;
    }

    private static List<Object> ids(Iterable<Document> documents) {
        List<Object> ids = new ArrayList<>();
        documents.forEach(d -> ids.add(d.get("_id")));
        return ids;
    }

    @Test
    void listCollections_reportsTheFilledInSpecification_andSimpleIsNoCollation() {
        db.createCollection(
                "reported",
                new CreateCollectionOptions()
                        .collation(Collation.builder()
                                .locale("en")
                                .collationStrength(CollationStrength.SECONDARY)
                                .build()));
        db.createCollection(
                "simple",
                new CreateCollectionOptions()
                        .collation(Collation.builder().locale("simple").build()));

        Document options = db.listCollections()
                .filter(new Document("name", "reported"))
                .first()
                .get("options", Document.class);
        assertThat(options.get("collation", Document.class))
                .isEqualTo(Document.parse("{locale: 'en', caseLevel: false, caseFirst: 'off', strength: 2,"
                        + " numericOrdering: false, alternate: 'non-ignorable', maxVariable: 'punct',"
                        + " normalization: false, backwards: false, version: '57.1'}"));
        assertThat(db.listCollections()
                        .filter(new Document("name", "simple"))
                        .first()
                        .get("options", Document.class))
                .doesNotContainKey("collation");
        assertThatThrownBy(() -> db.createCollection(
                        "french",
                        new CreateCollectionOptions()
                                .collation(Collation.builder().locale("fr").build())))
                .isInstanceOfSatisfying(
                        MongoCommandException.class,
                        e -> assertThat(e.getErrorMessage())
                                .startsWith("emulator: the testkit does not emulate the collation of locale 'fr'"));
    }

    @Test
    void strength2_equalityIgnoresCase_inFindCountUpdateAndDelete_butNotAccents() {
        MongoCollection<Document> people = caseInsensitive("people2", 2);

        assertThat(ids(people.find(Filters.eq("name", "alice")))).containsExactlyInAnyOrder(1, 2);
        assertThat(ids(people.find(Filters.in("name", "bob", "nobody")))).containsExactly(3);
        assertThat(ids(people.find(Filters.ne("name", "ALICE")))).containsExactlyInAnyOrder(3, 4);
        assertThat(ids(people.find(Filters.nin("name", List.of("alice", "BOB")))))
                .containsExactly(4);
        assertThat(people.countDocuments(Filters.eq("name", "elodie")))
                .as("accents count at strength 2")
                .isZero();
        assertThat(people.countDocuments(Filters.eq("name", "élodie"))).isEqualTo(1);

        assertThat(people.updateMany(Filters.eq("name", "aLiCe"), Updates.set("seen", true))
                        .getModifiedCount())
                .isEqualTo(2);
        assertThat(people.deleteOne(Filters.eq("name", "BOB")).getDeletedCount())
                .isEqualTo(1);
        // a command naming its own (simple) collation compares binary
        assertThat(people.countDocuments(
                        Filters.eq("name", "alice"),
                        new com.mongodb.client.model.CountOptions()
                                .collation(Collation.builder().locale("simple").build())))
                .isZero();
    }

    @Test
    void strength1_ignoresCaseAndAccents() {
        MongoCollection<Document> people = caseInsensitive("people1", 1);

        assertThat(ids(people.find(Filters.eq("name", "ELODIE")))).containsExactly(4);
        assertThat(ids(people.find(Filters.eq("name", "alice")))).containsExactlyInAnyOrder(1, 2);
    }

    @Test
    void upsert_matchingNothing_insertsTheQuerysValue_andMatchingIgnoresCase() {
        MongoCollection<Document> people = caseInsensitive("upserts", 2);

        assertThat(people.updateOne(Filters.eq("name", "bob"), Updates.set("n", 1), new UpdateOptions().upsert(true))
                        .getUpsertedId())
                .isNull();
        assertThat(people.find(Filters.eq("_id", 3)).first().getInteger("n")).isEqualTo(1);
        assertThat(people.updateOne(Filters.eq("name", "Carol"), Updates.set("n", 2), new UpdateOptions().upsert(true))
                        .getUpsertedId())
                .isNotNull();
        assertThat(people.find(Filters.eq("name", "CAROL")).first().getString("name"))
                .isEqualTo("Carol");
    }

    @Test
    void stringIds_equalUnderTheCollation_areDuplicates() {
        db.createCollection(
                "ids",
                new CreateCollectionOptions()
                        .collation(Collation.builder()
                                .locale("en")
                                .collationStrength(CollationStrength.SECONDARY)
                                .build()));
        MongoCollection<Document> ids = db.getCollection("ids");
        ids.insertOne(new Document("_id", "Key"));

        assertThatThrownBy(() -> ids.insertOne(new Document("_id", "KEY")))
                .isInstanceOfSatisfying(
                        MongoWriteException.class, e -> assertThat(e.getCode()).isEqualTo(11000));
        assertThat(ids.countDocuments()).isEqualTo(1);
    }

    @Test
    void whatTheEmulatorCannotApply_isRefusedWithAMessage() {
        MongoCollection<Document> people = caseInsensitive("refused", 2);

        assertThatThrownBy(() -> people.find(Filters.gt("name", "b")).first())
                .isInstanceOfSatisfying(
                        MongoCommandException.class,
                        e -> assertThat(e.getErrorMessage())
                                .startsWith("emulator: the testkit does not emulate a string in $gt")
                                .contains("under a collection's default collation"));
        assertThatThrownBy(() -> people.find().sort(Sorts.ascending("name")).first())
                .isInstanceOfSatisfying(
                        MongoCommandException.class,
                        e -> assertThat(e.getErrorMessage()).contains("a sort on strings"));
        assertThatThrownBy(() -> people.createIndex(Indexes.ascending("name"), new IndexOptions().unique(true)))
                .isInstanceOfSatisfying(
                        MongoCommandException.class,
                        e -> assertThat(e.getErrorMessage()).contains("a unique index"));
        // a sort on numbers is the same under any collation
        assertThat(ids(people.find().sort(Sorts.descending("_id")))).containsExactly(4, 3, 2, 1);
    }
}
