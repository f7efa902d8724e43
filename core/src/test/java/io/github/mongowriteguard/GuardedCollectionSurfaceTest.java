package io.github.mongowriteguard;

import static org.assertj.core.api.Assertions.assertThat;

import com.mongodb.client.ClientSession;
import com.mongodb.client.MongoCollection;
import com.mongodb.client.model.Filters;
import com.mongodb.client.model.Updates;
import io.github.mongowriteguard.testkit.TestDeployment;
import java.lang.reflect.Method;
import java.lang.reflect.Modifier;
import java.util.Arrays;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;
import org.bson.BsonDocument;
import org.bson.Document;
import org.junit.jupiter.api.Test;

/** {@link GuardedCollection} has every write method of the driver's {@link MongoCollection}, and uses sessions as it says. */
class GuardedCollectionSurfaceTest {
    private static final Set<String> WRITE_METHODS = Set.of(
            "bulkWrite",
            "insertOne",
            "insertMany",
            "replaceOne",
            "updateOne",
            "updateMany",
            "deleteOne",
            "deleteMany",
            "findOneAndDelete",
            "findOneAndReplace",
            "findOneAndUpdate");

    /** Fails when a driver version adds a write overload: guard it (or list it as a difference in the README). */
    @Test
    void everyWriteOverloadOfTheDriversMongoCollection_existsOnGuardedCollection() {
        Set<String> driver = signatures(MongoCollection.class);
        Set<String> guard = signatures(GuardedCollection.class);

        assertThat(driver).hasSizeGreaterThan(50);
        assertThat(guard).containsAll(driver);
    }

    /**
     * {@link GuardedMongoCollection} inherits the methods the guard leaves as they are from a base that hands them to
     * the raw collection; a write method forwarded there would silently bypass the guard: each one must be declared on
     * the guarded class itself (the base forwards none, so the compiler checks it too; this test keeps it so).
     */
    @Test
    void everyWriteOverloadOfTheDriversMongoCollection_isDeclaredOnGuardedMongoCollection_notInherited() {
        Set<String> driver = signatures(MongoCollection.class);
        Set<String> declared = signatures(Arrays.stream(GuardedMongoCollection.class.getDeclaredMethods())
                .filter(method -> !method.isBridge() && !method.isSynthetic())
                .toArray(Method[]::new));

        assertThat(driver).hasSizeGreaterThan(50);
        assertThat(declared).containsAll(driver);
    }

    @Test
    void aWriteOnTheCallersSession_advancesItsTransactionNumbers_soTheCallersLaterWritesOnItGoOn() {
        try (TestDeployment deployment = TestDeployment.replicaSet();
                GuardFixture fixture = new GuardFixture(deployment.connectionString(), 5_000);
                ClientSession session = fixture.client.startSession()) {
            MongoCollection<Document> raw =
                    fixture.client.getDatabase("surface").getCollection("sessions");
            GuardedCollection<Document> guarded = fixture.wrap(raw);

            raw.insertOne(session, new Document("_id", 1));
            guarded.updateOne(session, Filters.eq("_id", 1), Updates.set("v", 1));
            raw.updateOne(session, Filters.eq("_id", 1), Updates.set("w", 2));
            guarded.findOneAndUpdate(session, Filters.eq("_id", 1), Updates.inc("n", 1));
            raw.deleteOne(session, Filters.eq("_id", 2));

            List<BsonDocument> sent = fixture.sent;
            assertThat(sent)
                    .allSatisfy(command -> assertThat(command.getDocument("lsid"))
                            .isEqualTo(session.getServerSession().getIdentifier()));
            assertThat(raw.find(Filters.eq("_id", 1)).first())
                    .containsEntry("v", 1)
                    .containsEntry("w", 2);
        }
    }

    @Test
    void insideAMultiDocumentTransaction_theWriteIsTheDriversOwn() {
        try (TestDeployment deployment = TestDeployment.replicaSet();
                GuardFixture fixture = new GuardFixture(deployment.connectionString(), 5_000);
                ClientSession session = fixture.client.startSession()) {
            GuardedCollection<Document> guarded =
                    fixture.wrap(fixture.client.getDatabase("surface").getCollection("tx"));
            session.startTransaction();
            guarded.insertOne(session, new Document("_id", 1));
            assertThat(fixture.client
                            .getDatabase("surface")
                            .getCollection("tx")
                            .find()
                            .first())
                    .as("invisible outside until commit")
                    .isNull();
            session.commitTransaction();
            assertThat(fixture.client
                            .getDatabase("surface")
                            .getCollection("tx")
                            .find()
                            .first())
                    .isEqualTo(new Document("_id", 1));

            assertThat(fixture.sent).singleElement().satisfies(command -> {
                assertThat(command.getBoolean("startTransaction").getValue()).isTrue();
                assertThat(command.containsKey("maxTimeMS"))
                        .as("no guard deadline inside a transaction")
                        .isFalse();
            });
        }
    }

    @Test
    void asMongoCollection_guardsEveryWrite_readsAsTheDriver_andStaysGuardedThroughWithMethods() {
        try (TestDeployment deployment = TestDeployment.replicaSet();
                GuardFixture fixture = new GuardFixture(deployment.connectionString(), 5_000)) {
            MongoCollection<Document> view = fixture.wrap(
                            fixture.client.getDatabase("surface").getCollection("view"))
                    .asMongoCollection();

            view.insertOne(new Document("_id", 1));
            view.withWriteConcern(com.mongodb.WriteConcern.MAJORITY)
                    .updateOne(Filters.eq("_id", 1), Updates.set("v", 1));
            view.withDocumentClass(BsonDocument.class).deleteMany(Filters.eq("_id", 2));

            assertThat(fixture.sent)
                    .hasSize(3)
                    .allSatisfy(command ->
                            assertThat(command.containsKey("maxTimeMS")).isTrue());
            assertThat(fixture.sent
                            .get(1)
                            .getDocument("writeConcern")
                            .getString("w")
                            .getValue())
                    .isEqualTo("majority");
            assertThat(view.find().first()).isEqualTo(new Document("_id", 1).append("v", 1));
            assertThat(view.getNamespace().getFullName()).isEqualTo("surface.view");
            org.assertj.core.api.Assertions.assertThatThrownBy(
                            () -> view.withTimeout(1, java.util.concurrent.TimeUnit.SECONDS))
                    .isInstanceOf(IllegalArgumentException.class)
                    .hasMessageContaining("withTimeout");
        }
    }

    private static Set<String> signatures(Class<?> type) {
        return signatures(type.getMethods());
    }

    private static Set<String> signatures(Method[] methods) {
        Set<String> signatures = new TreeSet<>();
        for (Method method : methods) {
            if (WRITE_METHODS.contains(method.getName()) && Modifier.isPublic(method.getModifiers())) {
                signatures.add(method.getName()
                        + Arrays.stream(method.getParameterTypes())
                                .map(Class::getSimpleName)
                                .toList());
            }
        }
        return signatures;
    }
}
