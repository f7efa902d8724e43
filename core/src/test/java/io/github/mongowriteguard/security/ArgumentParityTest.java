package io.github.mongowriteguard.security;

import static org.assertj.core.api.Assertions.assertThat;

import com.mongodb.MongoCommandException;
import com.mongodb.client.MongoCollection;
import com.mongodb.client.model.BulkWriteOptions;
import com.mongodb.client.model.Filters;
import com.mongodb.client.model.FindOneAndDeleteOptions;
import com.mongodb.client.model.FindOneAndReplaceOptions;
import com.mongodb.client.model.FindOneAndUpdateOptions;
import com.mongodb.client.model.InsertManyOptions;
import com.mongodb.client.model.Updates;
import com.mongodb.client.model.bulk.ClientBulkWriteOptions;
import io.github.mongowriteguard.exception.InvalidBulkException;
import io.github.mongowriteguard.outcome.WriteOutcome;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;
import org.bson.Document;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * Arguments the driver refuses before sending (a negative {@code maxTime}, an empty bulk), side by side through the raw
 * driver and the guard: the guard refuses them too, with an {@code IllegalArgumentException} that carries the driver's
 * words, and sends nothing.
 */
class ArgumentParityTest {
    private static SideBySide sides;

    @BeforeAll
    static void start() {
        sides = new SideBySide("arguments");
        sides.driver.insertOne(new Document("_id", 1).append("v", 0));
        sides.guarded.unwrap().insertOne(new Document("_id", 1).append("v", 0));
    }

    @AfterAll
    static void stop() {
        sides.close();
    }

    enum FindOneAnd {
        UPDATE(c -> c.findOneAndUpdate(
                Filters.eq("_id", 1),
                Updates.set("v", 1),
                new FindOneAndUpdateOptions().maxTime(-1, TimeUnit.MILLISECONDS))),
        UPDATE_PIPELINE(c -> c.findOneAndUpdate(
                Filters.eq("_id", 1),
                List.of(Updates.set("v", 1)),
                new FindOneAndUpdateOptions().maxTime(-5, TimeUnit.SECONDS))),
        REPLACE(c -> c.findOneAndReplace(
                Filters.eq("_id", 1),
                new Document("v", 2),
                new FindOneAndReplaceOptions().maxTime(-1, TimeUnit.MILLISECONDS))),
        DELETE(c -> c.findOneAndDelete(
                Filters.eq("_id", 1), new FindOneAndDeleteOptions().maxTime(-1, TimeUnit.MILLISECONDS)));

        final Consumer<MongoCollection<Document>> call;

        FindOneAnd(Consumer<MongoCollection<Document>> call) {
            this.call = call;
        }
    }

    @ParameterizedTest
    @EnumSource(FindOneAnd.class)
    void negativeMaxTime_isRefusedBeforeSending_asTheDriverRefusesIt(FindOneAnd method) {
        int sentBefore = sides.sentWrites.size();
        Throwable driver = SideBySide.thrown(() -> method.call.accept(sides.driver));
        Throwable guard = SideBySide.thrown(() -> method.call.accept(sides.guarded.asMongoCollection()));

        assertThat(driver)
                .isExactlyInstanceOf(IllegalArgumentException.class)
                .hasMessage("state should be: maxTimeMS must be >= 0");
        assertThat(guard)
                .isInstanceOf(IllegalArgumentException.class)
                .isInstanceOf(InvalidBulkException.class)
                .hasMessageContaining(driver.getMessage())
                .hasMessageContaining("Nothing was sent");
        assertThat(((InvalidBulkException) guard).problem()).isEqualTo(InvalidBulkException.Problem.INVALID_OPTION);
        assertThat(sides.sentWrites.size()).isEqualTo(sentBefore);
        assertThat(sides.guarded.unwrap().find(Filters.eq("_id", 1)).first()).containsEntry("v", 0);
    }

    enum OutOfRange {
        UPDATE(c -> c.findOneAndUpdate(
                Filters.eq("_id", 1),
                Updates.set("v", 1),
                new FindOneAndUpdateOptions().maxTime(Long.MAX_VALUE, TimeUnit.MILLISECONDS))),
        UPDATE_PIPELINE(c -> c.findOneAndUpdate(
                Filters.eq("_id", 1),
                List.of(Updates.set("v", 1)),
                new FindOneAndUpdateOptions().maxTime(Integer.MAX_VALUE + 1L, TimeUnit.MILLISECONDS))),
        REPLACE(c -> c.findOneAndReplace(
                Filters.eq("_id", 1),
                new Document("v", 2),
                new FindOneAndReplaceOptions().maxTime(Long.MAX_VALUE, TimeUnit.SECONDS))),
        DELETE(c -> c.findOneAndDelete(
                Filters.eq("_id", 1), new FindOneAndDeleteOptions().maxTime(Long.MAX_VALUE, TimeUnit.MILLISECONDS)));

        final Consumer<MongoCollection<Document>> call;

        OutOfRange(Consumer<MongoCollection<Document>> call) {
            this.call = call;
        }
    }

    /**
     * A {@code maxTime} above 2^31 - 1 ms: the driver sends it, and the server refuses it before the command runs
     * (mongodb/mongo {@code src/mongo/db/query/max_time_ms_parser.cpp}, {@code parseMaxTimeMS}: {@code BadValue}, "N
     * value for maxTimeMS is out of range"). The guard refuses it with the server's words, before sending, instead of
     * lowering it to its deadline and writing.
     */
    @ParameterizedTest
    @EnumSource(OutOfRange.class)
    void outOfRangeMaxTime_isRefusedBeforeSending_asTheServerRefusesIt(OutOfRange method) {
        int sentBefore = sides.sentWrites.size();
        Throwable driver = SideBySide.thrown(() -> method.call.accept(sides.driver));
        Throwable guard = SideBySide.thrown(() -> method.call.accept(sides.guarded.asMongoCollection()));

        assertThat(driver).isInstanceOf(MongoCommandException.class).hasMessageContaining("maxTimeMS is out of range");
        assertThat(((MongoCommandException) driver).getErrorCode()).isEqualTo(2);
        assertThat(guard)
                .isInstanceOf(InvalidBulkException.class)
                .hasMessageContaining("BadValue")
                .hasMessageContaining("value for maxTimeMS is out of range")
                .hasMessageContaining("Nothing was sent");
        assertThat(((InvalidBulkException) guard).problem()).isEqualTo(InvalidBulkException.Problem.INVALID_OPTION);
        assertThat(sides.sentWrites.size())
                .as("only the driver's refused command")
                .isEqualTo(sentBefore + 1);
        assertThat(sides.guarded.unwrap().find(Filters.eq("_id", 1)).first()).containsEntry("v", 0);
    }

    @Test
    void theLargestMaxTimeTheServerTakes_isAccepted() {
        FindOneAndUpdateOptions largest =
                new FindOneAndUpdateOptions().maxTime(Integer.MAX_VALUE, TimeUnit.MILLISECONDS);
        assertThat(sides.driver.findOneAndUpdate(Filters.eq("_id", 1), Updates.set("x", 1), largest))
                .isNotNull();
        assertThat(sides.guarded.findOneAndUpdate(Filters.eq("_id", 1), Updates.set("x", 1), largest))
                .isNotNull();
    }

    @Test
    void zeroMaxTime_isAccepted_asTheDriverAcceptsIt() {
        FindOneAndUpdateOptions zero = new FindOneAndUpdateOptions().maxTime(0, TimeUnit.MILLISECONDS);
        assertThat(sides.driver.findOneAndUpdate(Filters.eq("_id", 1), Updates.set("w", 1), zero))
                .isNotNull();
        assertThat(sides.guarded.findOneAndUpdate(Filters.eq("_id", 1), Updates.set("w", 1), zero))
                .isNotNull();
    }

    enum EmptyBulk {
        BULK_WRITE(c -> c.bulkWrite(List.of())),
        UNORDERED_BULK_WRITE(c -> c.bulkWrite(List.of(), new BulkWriteOptions().ordered(false))),
        INSERT_MANY(c -> c.insertMany(List.of())),
        UNORDERED_INSERT_MANY(c -> c.insertMany(List.of(), new InsertManyOptions().ordered(false)));

        final Consumer<MongoCollection<Document>> call;

        EmptyBulk(Consumer<MongoCollection<Document>> call) {
            this.call = call;
        }
    }

    @ParameterizedTest
    @EnumSource(EmptyBulk.class)
    void emptyBulk_isRefused_asTheDriverRefusesIt(EmptyBulk method) {
        int sentBefore = sides.sentWrites.size();
        Throwable driver = SideBySide.thrown(() -> method.call.accept(sides.driver));
        Throwable guard = SideBySide.thrown(() -> method.call.accept(sides.guarded.asMongoCollection()));

        assertThat(driver)
                .isExactlyInstanceOf(IllegalArgumentException.class)
                .hasMessage("state should be: writeRequests is not an empty list");
        assertThat(guard)
                .isInstanceOf(InvalidBulkException.class)
                .hasMessageContaining(driver.getMessage())
                .hasMessageContaining("Nothing was sent");
        assertThat(((InvalidBulkException) guard).problem()).isEqualTo(InvalidBulkException.Problem.EMPTY_BULK);
        assertThat(sides.sentWrites.size()).isEqualTo(sentBefore);
    }

    enum NullDocument {
        INSERT_MANY(c -> c.insertMany(withNullAtIndex1())),
        UNORDERED_INSERT_MANY(c -> c.insertMany(withNullAtIndex1(), new InsertManyOptions().ordered(false)));

        final Consumer<MongoCollection<Document>> call;

        NullDocument(Consumer<MongoCollection<Document>> call) {
            this.call = call;
        }

        static List<Document> withNullAtIndex1() {
            return Arrays.asList(new Document("_id", 10), null, new Document("_id", 12));
        }
    }

    /**
     * A null document in {@code insertMany}: the driver refuses the list before sending ({@code Operations.insertMany},
     * "documents can not contain a null value"); the guard refuses it too, with the driver's exception type and words,
     * the index and the fix, and sends nothing (not even the documents before it).
     */
    @ParameterizedTest
    @EnumSource(NullDocument.class)
    void aNullDocumentInInsertMany_isRefusedWithItsIndex_asTheDriverRefusesIt(NullDocument method) {
        int sentBefore = sides.sentWrites.size();
        Throwable driver = SideBySide.thrown(() -> method.call.accept(sides.driver));
        Throwable guard = SideBySide.thrown(() -> method.call.accept(sides.guarded.asMongoCollection()));

        assertThat(driver)
                .isExactlyInstanceOf(IllegalArgumentException.class)
                .hasMessage("documents can not contain a null value");
        assertThat(guard)
                .isInstanceOf(IllegalArgumentException.class)
                .isInstanceOf(InvalidBulkException.class)
                .hasMessageContaining(driver.getMessage())
                .hasMessageContaining("index 1")
                .hasMessageContaining("remove it from the list")
                .hasMessageContaining("Nothing was sent");
        assertThat(((InvalidBulkException) guard).index()).isEqualTo(1);
        assertThat(((InvalidBulkException) guard).problem()).isEqualTo(InvalidBulkException.Problem.NULL_ELEMENT);
        assertThat(sides.sentWrites.size()).isEqualTo(sentBefore);
        assertThat(sides.guarded.unwrap().countDocuments(Filters.in("_id", 10, 12)))
                .isZero();
    }

    @Test
    void emptyClientBulk_isRefused_asTheDriverRefusesIt() {
        Throwable driver = SideBySide.thrown(() -> sides.client.bulkWrite(List.of()));
        Throwable guard = SideBySide.thrown(() -> sides.guardedClient().bulkWrite(List.of()));
        Throwable guardWithOptions = SideBySide.thrown(
                () -> sides.guardedClient().bulkWrite(List.of(), ClientBulkWriteOptions.clientBulkWriteOptions()));

        assertThat(driver)
                .isExactlyInstanceOf(IllegalArgumentException.class)
                .hasMessage("state should be: `clientWriteModels` must not be empty");
        assertThat(guard).isInstanceOf(InvalidBulkException.class).hasMessageContaining(driver.getMessage());
        assertThat(guardWithOptions).isInstanceOf(InvalidBulkException.class).hasMessageContaining(driver.getMessage());
    }

    @Test
    void emptyExecute_theGuardsOwnOutcomeCall_returnsAnEmptyOutcome_withoutSending() {
        int sentBefore = sides.sentWrites.size();

        WriteOutcome<Document> outcome = sides.guarded.execute(List.of(), new BulkWriteOptions());

        assertThat(outcome.outcomes()).isEmpty();
        assertThat(outcome.isComplete()).isTrue();
        assertThat(sides.sentWrites.size()).isEqualTo(sentBefore);
    }
}
