package io.github.mongowriteguard;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.catchThrowable;

import com.mongodb.MongoBulkWriteException;
import com.mongodb.MongoCommandException;
import com.mongodb.MongoWriteException;
import com.mongodb.client.MongoCollection;
import com.mongodb.client.model.BulkWriteOptions;
import com.mongodb.client.model.DeleteOneModel;
import com.mongodb.client.model.Filters;
import com.mongodb.client.model.InsertOneModel;
import com.mongodb.client.model.ReplaceOneModel;
import com.mongodb.client.model.ReplaceOptions;
import com.mongodb.client.model.Sorts;
import com.mongodb.client.model.UpdateOneModel;
import com.mongodb.client.model.UpdateOptions;
import com.mongodb.client.model.Updates;
import com.mongodb.client.model.WriteModel;
import io.github.mongowriteguard.exception.GuardedBulkWriteException;
import io.github.mongowriteguard.exception.InvalidBulkException;
import io.github.mongowriteguard.outcome.WriteOutcome;
import io.github.mongowriteguard.outcome.WriteStatus;
import io.github.mongowriteguard.testkit.TestDeployment;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.function.Function;
import org.bson.BsonDocument;
import org.bson.BsonString;
import org.bson.Document;
import org.bson.types.Decimal128;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * The cases where the guard once differed silently from the driver (issue 13), each run side by side: the same bulk
 * through the raw driver on one collection and through the guard on another, on the same deployment, then the stored
 * documents (as BSON, so an int32 {@code _id} differs from an int64 one), the results and the exceptions compared.
 */
@org.junit.jupiter.api.Tag("deployment") // runs against -Dmongo.uri (the real-mongodb profile)
class DriverParityTest {
    private TestDeployment deployment;
    private GuardFixture fixture;
    private MongoCollection<Document> raw;
    private MongoCollection<Document> guardedRaw;
    private GuardedCollection<Document> guarded;

    @BeforeEach
    void start() {
        deployment = TestDeployment.replicaSet();
        fixture = new GuardFixture(deployment.connectionString(), 5_000);
        raw = fixture.client.getDatabase("parity").getCollection("driver");
        guardedRaw = fixture.client.getDatabase("parity").getCollection("guard");
        raw.drop();
        guardedRaw.drop();
        guarded = fixture.wrap(guardedRaw);
    }

    @AfterEach
    void stop() {
        fixture.close();
        deployment.close();
    }

    @Test
    void unorderedBulk_attemptsTheWriteAfterAFailedOneOnTheSameKey_asTheDriverDoes() {
        seed(new Document("_id", 0));
        BulkWriteOptions unordered = new BulkWriteOptions().ordered(false);
        Function<Integer, List<WriteModel<Document>>> models = run -> List.of(
                new InsertOneModel<>(new Document("_id", 0.0)),
                new ReplaceOneModel<>(Filters.eq("_id", 0), new Document("v", "replaced")));

        MongoBulkWriteException driver =
                (MongoBulkWriteException) catchThrowable(() -> raw.bulkWrite(models.apply(0), unordered));
        MongoBulkWriteException guard =
                (MongoBulkWriteException) catchThrowable(() -> guarded.bulkWrite(models.apply(1), unordered));

        assertSameErrors(guard, driver);
        assertThat(guard.getWriteResult()).isEqualTo(driver.getWriteResult());
        assertSameDocuments();
        assertThat(documents(guardedRaw)).containsExactly(BsonDocument.parse("{_id: 0, v: 'replaced'}"));
    }

    /**
     * The documents end as the driver leaves them, but where the driver throws the failed delete command's exception
     * as it is and hides the applied update, the guard throws its bulk exception with the outcome (README, deliberate
     * differences): the driver's exception is its cause.
     */
    @Test
    void aFailingDeleteAfterAnUpdateOnTheSameKey_leavesTheUpdateApplied_andSaysSo() {
        seed(new Document("_id", 1).append("v", 0));
        List<WriteModel<Document>> models = List.of(
                new UpdateOneModel<>(Filters.eq("_id", 1), Updates.set("v", 7)),
                new DeleteOneModel<>(Filters.eq("_id", 1)));

        failNext("delete", 2);
        Throwable driver = catchThrowable(() -> raw.bulkWrite(models));
        failNext("delete", 2);
        Throwable guard = catchThrowable(() -> guarded.bulkWrite(models));

        assertThat(driver).isInstanceOf(MongoCommandException.class);
        assertThat(guard).isInstanceOf(GuardedBulkWriteException.class);
        assertThat(guard.getCause()).isExactlyInstanceOf(driver.getClass());
        assertThat(((MongoCommandException) guard.getCause()).getErrorCode()).isEqualTo(2);
        GuardedBulkWriteException bulk = (GuardedBulkWriteException) guard;
        assertThat(bulk.outcome().outcome(0).status()).isEqualTo(WriteStatus.APPLIED);
        assertThat(bulk.outcome().outcome(1).status()).isEqualTo(WriteStatus.FAILED);
        assertThat(bulk.getWriteResult().getModifiedCount()).isEqualTo(1);
        assertSameDocuments();
        assertThat(documents(guardedRaw)).containsExactly(BsonDocument.parse("{_id: 1, v: 7}"));
    }

    @Test
    void orderedBulk_aFailedUpdateStopsItsKey_theLaterDeleteIsNotRun() {
        seed(new Document("_id", 5).append("n", "x"));
        List<WriteModel<Document>> models = List.of(
                new UpdateOneModel<>(Filters.eq("_id", 5), Updates.inc("n", 1)),
                new DeleteOneModel<>(Filters.eq("_id", 5.0)));

        MongoBulkWriteException driver = (MongoBulkWriteException) catchThrowable(() -> raw.bulkWrite(models));
        Throwable thrown = catchThrowable(() -> guarded.bulkWrite(models));

        assertThat(thrown).isInstanceOf(GuardedBulkWriteException.class);
        GuardedBulkWriteException guard = (GuardedBulkWriteException) thrown;
        assertSameErrors(guard, driver);
        assertThat(guard.outcome().outcome(1).status()).isEqualTo(WriteStatus.SKIPPED);
        assertSameDocuments();
    }

    @Test
    void aDuplicateInsertBeforeADeleteOnTheSameKey_isReported_andStopsTheKey() {
        seed(new Document("_id", 3));
        List<WriteModel<Document>> models =
                List.of(new InsertOneModel<>(new Document("_id", 3)), new DeleteOneModel<>(Filters.eq("_id", 3)));

        MongoBulkWriteException driver = (MongoBulkWriteException) catchThrowable(() -> raw.bulkWrite(models));
        MongoBulkWriteException guard =
                (MongoBulkWriteException) catchThrowable(() -> guarded.bulkWrite(copies(models)));

        assertSameErrors(guard, driver);
        assertSameDocuments();
    }

    @Test
    void numericIdsThatCompareEqual_keepTheTypeTheDriverStores() {
        Function<Integer, List<WriteModel<Document>>> models = run -> List.of(
                new UpdateOneModel<>(Filters.eq("_id", 5), Updates.set("a", 1), new UpdateOptions().upsert(true)),
                new ReplaceOneModel<>(Filters.eq("_id", 5L), new Document("b", 2), new ReplaceOptions().upsert(true)),
                new DeleteOneModel<>(Filters.eq("_id", 6)),
                new ReplaceOneModel<>(Filters.eq("_id", 6L), new Document("c", 3), new ReplaceOptions().upsert(true)),
                new ReplaceOneModel<>(
                        Filters.eq("_id", new Decimal128(7)), new Document("d", 4), new ReplaceOptions().upsert(true)),
                new UpdateOneModel<>(Filters.eq("_id", 7.0), Updates.set("e", 5), new UpdateOptions().upsert(true)));
        seed(new Document("_id", 6));

        raw.bulkWrite(models.apply(0));
        guarded.bulkWrite(models.apply(1));

        assertSameDocuments();
    }

    @Test
    void twoInsertsOfOneId_writeTheFirstAndReportTheSecond_orderedAndUnordered() {
        for (boolean ordered : new boolean[] {true, false}) {
            raw.drop();
            guardedRaw.drop();
            List<WriteModel<Document>> models = List.of(
                    new InsertOneModel<>(new Document("_id", 1).append("v", "a")),
                    new InsertOneModel<>(new Document("_id", 2)),
                    new InsertOneModel<>(new Document("_id", 1).append("v", "b")));
            BulkWriteOptions options = new BulkWriteOptions().ordered(ordered);

            MongoBulkWriteException driver =
                    (MongoBulkWriteException) catchThrowable(() -> raw.bulkWrite(models, options));
            MongoBulkWriteException guard =
                    (MongoBulkWriteException) catchThrowable(() -> guarded.bulkWrite(copies(models), options));

            assertSameErrors(guard, driver);
            assertThat(guard.getWriteResult()).as("ordered=%s", ordered).isEqualTo(driver.getWriteResult());
            assertSameDocuments();
        }
    }

    @Test
    void callersComment_bypassDocumentValidation_andLet_areSentAsTheDriverSendsThem() {
        BulkWriteOptions options = new BulkWriteOptions()
                .comment("caller's comment")
                .bypassDocumentValidation(true)
                .let(new Document("x", 1));
        List<WriteModel<Document>> models = List.of(
                new InsertOneModel<>(new Document("_id", 1)),
                new UpdateOneModel<>(Filters.eq("_id", 1), Updates.set("v", 1)));

        guarded.bulkWrite(models, options);

        assertThat(sentTo("guard", null)).hasSize(2).allSatisfy(command -> {
            assertThat(command.get("comment")).isEqualTo(new BsonString("caller's comment"));
            assertThat(command.getBoolean("bypassDocumentValidation").getValue())
                    .isTrue();
            assertThat(command.getDocument("let")).isEqualTo(BsonDocument.parse("{x: 1}"));
        });
    }

    @Test
    void sortOfAnUpdateOne_isSent() {
        seed(new Document("_id", 1).append("k", 1));
        guarded.bulkWrite(List.of(new UpdateOneModel<>(
                Filters.eq("k", 1), Updates.set("v", 1), new UpdateOptions().sort(Sorts.descending("_id")))));

        assertThat(sentTo("guard", "update"))
                .singleElement()
                .satisfies(command -> assertThat(
                                command.getArray("updates").get(0).asDocument().getDocument("sort"))
                        .isEqualTo(BsonDocument.parse("{_id: -1}")));
    }

    @Test
    void collectionWithTimeout_isRefused_notIgnored() {
        assertThatThrownBy(() -> fixture.wrap(guardedRaw.withTimeout(5, TimeUnit.SECONDS)))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("timeoutMS=5000")
                .hasMessageContaining("withTimeout");
        assertThatThrownBy(() -> fixture.wrap(fixture.client
                        .getDatabase("parity")
                        .withTimeout(5, TimeUnit.SECONDS)
                        .getCollection("guard")))
                .isInstanceOf(IllegalArgumentException.class);
    }

    @Test
    void emptyUpdatePipeline_isRefusedBeforeAnythingIsSent() {
        List<WriteModel<Document>> models = List.of(
                new InsertOneModel<>(new Document("_id", 1)), new UpdateOneModel<>(Filters.eq("_id", 1), List.of()));

        assertThatThrownBy(() -> raw.bulkWrite(models))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("The pipeline may not be empty");
        assertThatThrownBy(() -> guarded.bulkWrite(copies(models)))
                .isInstanceOf(InvalidBulkException.class)
                .hasMessageContaining("the update pipeline is empty");
        assertThat(sentTo("driver", "insert"))
                .as("the driver sends the batch before the invalid one")
                .hasSize(1);
        assertThat(sentTo("guard", null)).as("the guard sends nothing").isEmpty();
        assertThat(guardedRaw.countDocuments()).isZero();
    }

    @Test
    void aWholeCommandError_isTheDriversCommandException_notAnInventedWriteError() {
        List<WriteModel<Document>> models = List.of(new InsertOneModel<>(new Document("_id", 1)));

        failNext("insert", 2);
        Throwable driver = catchThrowable(() -> raw.bulkWrite(models));
        failNext("insert", 2);
        Throwable guard = catchThrowable(() -> guarded.bulkWrite(copies(models)));

        assertThat(guard).isExactlyInstanceOf(driver.getClass()).isInstanceOf(MongoCommandException.class);
        assertThat(((MongoCommandException) guard).getErrorCode())
                .isEqualTo(((MongoCommandException) driver).getErrorCode());
        assertThat(((MongoCommandException) guard).getResponse())
                .isEqualTo(((MongoCommandException) driver).getResponse());

        failNext("insert", 2);
        WriteOutcome<Document> outcome = guarded.execute(copies(models), new BulkWriteOptions());
        assertThat(outcome.commandError()).isInstanceOf(MongoCommandException.class);
        assertThat(outcome.outcome(0).status()).isEqualTo(WriteStatus.FAILED);
    }

    @Test
    void anInvalidFilter_failsAsTheDriversDoes() {
        List<WriteModel<Document>> models =
                List.of(new UpdateOneModel<>(new Document("$and", List.of()), Updates.set("v", 1)));

        Throwable driver = catchThrowable(() -> raw.bulkWrite(models));
        Throwable guard = catchThrowable(() -> guarded.bulkWrite(models));

        if (driver == null) {
            assertThat(guard).isNull();
        } else {
            assertThat(guard).isInstanceOf(driver.getClass());
        }
        if (driver instanceof MongoBulkWriteException driverBulk) {
            assertSameErrors((MongoBulkWriteException) guard, driverBulk);
        }
        if (driver instanceof MongoCommandException driverCommand) {
            assertThat(((MongoCommandException) guard).getErrorCode()).isEqualTo(driverCommand.getErrorCode());
        }
        assertSameDocuments();
    }

    @Test
    void writeErrors_keepTheServersDetails_andTheAddressOfTheSend() {
        seed(new Document("_id", 1));
        MongoWriteException driver = (MongoWriteException) catchThrowable(() -> raw.insertOne(new Document("_id", 1)));
        MongoWriteException guard =
                (MongoWriteException) catchThrowable(() -> guarded.insertOne(new Document("_id", 1)));

        assertThat(guard.getError().getCode()).isEqualTo(driver.getError().getCode());
        assertThat(guard.getError().getDetails()).isEqualTo(driver.getError().getDetails());
        assertThat(sameNamespace(guard.getError().getMessage()))
                .isEqualTo(sameNamespace(driver.getError().getMessage()));
        assertThat(guard.getServerAddress()).isEqualTo(driver.getServerAddress());

        WriteOutcome<Document> outcome =
                guarded.execute(List.of(new InsertOneModel<>(new Document("_id", 1))), new BulkWriteOptions());
        assertThat(outcome.outcome(0).errorCode()).isEqualTo(11000);
        assertThat(outcome.serverAddress()).isEqualTo(driver.getServerAddress());
    }

    /** Index, code, details and message of every write error; messages name the collection, which differs. */
    private static void assertSameErrors(MongoBulkWriteException guard, MongoBulkWriteException driver) {
        assertThat(guard.getWriteErrors())
                .extracting(e ->
                        e.getIndex() + " " + e.getCode() + " " + e.getDetails() + " " + sameNamespace(e.getMessage()))
                .isEqualTo(driver.getWriteErrors().stream()
                        .map(e -> e.getIndex() + " " + e.getCode() + " " + e.getDetails() + " "
                                + sameNamespace(e.getMessage()))
                        .toList());
        assertThat(guard.getServerAddress()).isEqualTo(driver.getServerAddress());
    }

    private static String sameNamespace(String message) {
        return message.replace("parity.guard", "parity.<collection>").replace("parity.driver", "parity.<collection>");
    }

    /** The write commands sent to one collection, optionally of one command name. */
    private List<BsonDocument> sentTo(String collection, String commandName) {
        return fixture.sent.stream()
                .filter(command -> {
                    String name = command.getFirstKey();
                    return command.getString(name).getValue().equals(collection)
                            && (commandName == null || name.equals(commandName));
                })
                .toList();
    }

    private void seed(Document document) {
        raw.insertOne(Document.parse(document.toJson()));
        guardedRaw.insertOne(Document.parse(document.toJson()));
    }

    private void failNext(String command, int code) {
        fixture.client
                .getDatabase("admin")
                .runCommand(new Document("configureFailPoint", "failCommand")
                        .append("mode", new Document("times", 1))
                        .append("data", new Document("failCommands", List.of(command)).append("errorCode", code)));
    }

    /** Fresh models for the guard's run: it writes assigned ids into insert documents. */
    private static List<WriteModel<Document>> copies(List<WriteModel<Document>> models) {
        List<WriteModel<Document>> copies = new ArrayList<>();
        for (WriteModel<Document> model : models) {
            copies.add(
                    model instanceof InsertOneModel<Document> insert
                            ? new InsertOneModel<>(
                                    Document.parse(insert.getDocument().toJson()))
                            : model);
        }
        return copies;
    }

    private void assertSameDocuments() {
        assertThat(documents(guardedRaw))
                .as("documents after the guard vs after the driver")
                .isEqualTo(documents(raw));
    }

    private static List<BsonDocument> documents(MongoCollection<Document> collection) {
        return collection
                .withDocumentClass(BsonDocument.class)
                .find()
                .sort(Sorts.ascending("_id"))
                .into(new ArrayList<>());
    }
}
