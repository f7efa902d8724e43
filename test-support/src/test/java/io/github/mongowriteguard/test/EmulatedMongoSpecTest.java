package io.github.mongowriteguard.test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.github.mongowriteguard.testkit.server.ServerVersion;
import java.util.Map;
import org.bson.BsonDocument;
import org.junit.jupiter.api.Test;

class EmulatedMongoSpecTest {
    private static final BsonDocument HASHED_ID = BsonDocument.parse("{_id: 'hashed'}");

    @Test
    void shardedCollections_onAReplicaSet_areRefused() {
        assertThatThrownBy(() ->
                        new EmulatedMongoSpec(0, 1, 1, Map.of("shop.orders", HASHED_ID), ServerVersion.V4_4, "", ""))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("[shop.orders] need a sharded cluster; set shards");
    }

    @Test
    void namespaceWithoutDatabase_isRefused() {
        assertThatThrownBy(
                        () -> new EmulatedMongoSpec(2, 1, 1, Map.of("orders", HASHED_ID), ServerVersion.V4_4, "", ""))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("'orders' must be database.collection");
    }

    @Test
    void shardKeyThatIsNotJson_isRefused_namingTheCollection() {
        assertThatThrownBy(() -> EmulatedMongoSpec.parseKey("shop.orders", "_id: hashed"))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("the shard key of shop.orders (_id: hashed) is not JSON");
    }

    @Test
    void membersWithShards_isRefused() {
        assertThatThrownBy(() -> new EmulatedMongoSpec(2, 1, 3, Map.of(), ServerVersion.V4_4, "", ""))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("members (3) applies to a replica set");
    }

    @Test
    void connectionString_getsTheDatabaseAndTheOptions_besideTheTestkitsOwn() {
        EmulatedMongoSpec spec =
                new EmulatedMongoSpec(0, 1, 1, Map.of(), ServerVersion.V4_4, "shop", "?socketTimeoutMS=900");
        assertThat(EmulatedMongoCluster.withDatabaseAndOptions("mongodb://127.0.0.1:4000/?replicaSet=rs0", spec))
                .isEqualTo("mongodb://127.0.0.1:4000/shop?replicaSet=rs0&socketTimeoutMS=900");
        assertThat(EmulatedMongoCluster.withDatabaseAndOptions("mongodb://127.0.0.1:4000,127.0.0.1:4001", spec))
                .isEqualTo("mongodb://127.0.0.1:4000,127.0.0.1:4001/shop?socketTimeoutMS=900");
    }

    @Test
    void equalAttributes_giveEqualSpecs() {
        assertThat(new EmulatedMongoSpec(3, 1, 1, Map.of("a.b", HASHED_ID), ServerVersion.V6_0, "", ""))
                .isEqualTo(
                        new EmulatedMongoSpec(3, 1, 1, Map.of("a.b", HASHED_ID.clone()), ServerVersion.V6_0, "", ""));
    }
}
