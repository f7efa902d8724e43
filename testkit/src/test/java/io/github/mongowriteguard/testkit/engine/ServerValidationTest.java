package io.github.mongowriteguard.testkit.engine;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.mongodb.MongoBulkWriteException;
import com.mongodb.MongoCommandException;
import com.mongodb.MongoWriteException;
import com.mongodb.client.MongoClient;
import com.mongodb.client.MongoCollection;
import com.mongodb.client.model.InsertManyOptions;
import io.github.mongowriteguard.testkit.Clients;
import io.github.mongowriteguard.testkit.EmulatedCluster;
import io.github.mongowriteguard.testkit.EmulatedReplicaSet;
import java.util.List;
import org.bson.BsonDouble;
import org.bson.BsonInt64;
import org.bson.BsonString;
import org.bson.BsonValue;
import org.bson.Document;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * What mongod refuses and the engine behind the emulator would accept, through the real driver: documents nested
 * deeper than 180 levels and top-level {@code $} field names on insert ({@code src/mongo/db/ops/insert.cpp},
 * {@code fixDocumentForInsert}; {@code src/mongo/bson/bson_depth.h}), and a {@code maxTimeMS} that is not an integral
 * number in {@code [0, 2^31 - 1]} ({@code src/mongo/db/query/query_request.cpp}, {@code parseMaxTimeMS}).
 */
class ServerValidationTest {
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

    static Document nested(int id, int levels) {
        Document inner = new Document("x", 1);
        for (int level = 2; level < levels; level++) {
            inner = new Document("a", inner);
        }
        return new Document("_id", id).append("a", inner);
    }

    @Test
    void aDocumentOf180Levels_isStored_andOf181_isRefusedWithOverflow() {
        MongoCollection<Document> collection = client.getDatabase("validation").getCollection("depth");
        collection.insertOne(nested(1, 180));

        assertThatThrownBy(() -> collection.insertOne(nested(2, 181)))
                .isInstanceOfSatisfying(MongoWriteException.class, e -> {
                    assertThat(e.getCode()).isEqualTo(15);
                    assertThat(e.getError().getMessage())
                            .isEqualTo("cannot insert document because it exceeds 180 levels of nesting");
                });
        assertThat(collection.countDocuments()).isEqualTo(1);
    }

    @Test
    void topLevelDollarFields_areRefused_perStatement_orderedStopsThere() {
        MongoCollection<Document> collection = client.getDatabase("validation").getCollection("dollar");
        List<Document> documents = List.of(
                new Document("_id", 1),
                new Document("_id", 2).append("$set", 1),
                nested(3, 200),
                new Document("_id", 4).append("nested", new Document("$inner", 1)));

        assertThatThrownBy(() -> collection.insertMany(documents, new InsertManyOptions().ordered(false)))
                .isInstanceOfSatisfying(MongoBulkWriteException.class, e -> {
                    assertThat(e.getWriteErrors()).extracting(w -> w.getIndex()).containsExactly(1, 2);
                    assertThat(e.getWriteErrors().get(0).getCode()).isEqualTo(2);
                    assertThat(e.getWriteErrors().get(0).getMessage())
                            .isEqualTo("Document can't have $ prefixed field names: $set");
                    assertThat(e.getWriteErrors().get(1).getCode()).isEqualTo(15);
                    assertThat(e.getWriteResult().getInsertedCount()).isEqualTo(2);
                });
        collection.drop();
        assertThatThrownBy(() -> collection.insertMany(documents))
                .isInstanceOfSatisfying(
                        MongoBulkWriteException.class,
                        e -> assertThat(e.getWriteErrors())
                                .extracting(w -> w.getIndex())
                                .containsExactly(1));
        assertThat(collection.countDocuments()).isEqualTo(1);
    }

    @Test
    void maxTimeMS_outsideTheServersRange_isBadValue() {
        for (BsonValue bad :
                List.of(new BsonInt64(-1), new BsonInt64(1L << 31), new BsonDouble(1.5), new BsonString("1000"))) {
            assertThatThrownBy(() -> client.getDatabase("validation")
                            .runCommand(new Document("find", "depth").append("maxTimeMS", bad)))
                    .as(bad.toString())
                    .isInstanceOfSatisfying(MongoCommandException.class, e -> {
                        assertThat(e.getErrorCode()).isEqualTo(2);
                        assertThat(e.getErrorMessage()).startsWith("maxTimeMS ");
                    });
        }
        assertThat(client.getDatabase("validation").runCommand(new Document("find", "depth").append("maxTimeMS", 0)))
                .containsKey("cursor");
        assertThat(client.getDatabase("validation")
                        .runCommand(new Document("find", "depth").append("maxTimeMS", Integer.MAX_VALUE)))
                .containsKey("cursor");
    }
}
