package io.github.mongowriteguard.test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.mongodb.ConnectionString;
import com.mongodb.MongoClientSettings;
import com.mongodb.client.MongoClient;
import com.mongodb.client.MongoClients;
import com.mongodb.client.MongoCollection;
import com.mongodb.client.model.Filters;
import com.mongodb.client.model.Updates;
import io.github.mongowriteguard.GuardedCollection;
import io.github.mongowriteguard.WriteGuard;
import io.github.mongowriteguard.testkit.EmulatedStandalone;
import io.github.mongowriteguard.testkit.server.ServerVersion;
import java.util.List;
import java.util.Map;
import org.bson.Document;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/** {@code @EmulatedMongo(standalone = true)}: a standalone mongod, injected by type, on which the guard writes. */
@ExtendWith(EmulatedMongoExtension.class)
@EmulatedMongo(standalone = true, database = "shop")
class EmulatedMongoStandaloneTest {

    @Test
    void injectsTheStandalone_andTheGuardWritesOnIt(
            EmulatedMongoCluster mongo, ConnectionString connection, EmulatedStandalone standalone) {
        assertThat(mongo.standalone()).isSameAs(standalone);
        assertThat(connection.getRequiredReplicaSetName()).isNull();
        assertThatThrownBy(mongo::replicaSet).hasMessageContaining("standalone()");
        WriteGuard guard = WriteGuard.create();
        try (MongoClient client = MongoClients.create(
                guard.configure(MongoClientSettings.builder().applyConnectionString(connection))
                        .build())) {
            MongoCollection<Document> raw = client.getDatabase("shop").getCollection("orders");
            GuardedCollection<Document> orders = guard.guardCollection(client, raw);
            orders.insertMany(List.of(new Document("_id", 1), new Document("_id", 2)));
            orders.updateOne(Filters.eq("_id", 1), Updates.inc("n", 1));

            assertThat(raw.countDocuments()).isEqualTo(2);
            assertThat(raw.find(Filters.eq("_id", 1)).first()).containsEntry("n", 1);
            // The first write may have gone out before the driver discovered the standalone: refused before it ran
            // (IllegalOperation 20), sent again without a txnNumber; nothing with one ran.
            assertThat(standalone.truth().commands(c -> c.hasTxnNumber() && c.executed()))
                    .isEmpty();
            assertThat(standalone.truth().commands(c -> c.hasTxnNumber())).hasSizeLessThanOrEqualTo(1);
        }
    }

    @Test
    void aStandaloneWithShardsOrMembers_isRefused_namingTheFix() {
        assertThatThrownBy(() -> new EmulatedMongoSpec(2, 1, 1, Map.of(), ServerVersion.V4_4, "", "", true))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("standalone is one mongod");
    }
}
