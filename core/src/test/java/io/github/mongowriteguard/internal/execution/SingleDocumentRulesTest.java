package io.github.mongowriteguard.internal.execution;

import static org.assertj.core.api.Assertions.assertThat;

import com.mongodb.MongoNamespace;
import com.mongodb.client.MongoClient;
import com.mongodb.client.MongoClients;
import io.github.mongowriteguard.internal.ClientPort;
import io.github.mongowriteguard.internal.catalog.CatalogSource;
import io.github.mongowriteguard.internal.plan.SingleDocumentById;
import io.github.mongowriteguard.testkit.EmulatedCluster;
import io.github.mongowriteguard.testkit.EmulatedReplicaSet;
import io.github.mongowriteguard.testkit.EmulatedShardedCluster;
import io.github.mongowriteguard.testkit.sharding.ShardKey;
import java.util.List;
import java.util.concurrent.atomic.AtomicLong;
import org.bson.BsonDocument;
import org.bson.BsonInt32;
import org.bson.BsonString;
import org.bson.Document;
import org.junit.jupiter.api.Test;

/** What the guard learns of a collection before it sends a pinned updateMany/deleteMany as a single-document write. */
class SingleDocumentRulesTest {

    @Test
    void replicaSet_plainOrMissingCollection_everyPinnedWriteIsSingle_andTheRuleIsKeptForItsTimeToLive() {
        try (EmulatedReplicaSet cluster = EmulatedCluster.replicaSet().start();
                MongoClient client = MongoClients.create(cluster.connectionString())) {
            client.getDatabase("r").getCollection("plain").insertOne(new Document("_id", 1));
            AtomicLong now = new AtomicLong();
            SingleDocumentRules rules = new SingleDocumentRules(now::get);
            CatalogSource access = CatalogSource.of(ClientPort.of(client));

            assertThat(rules.forCollection(access, new MongoNamespace("r.plain"), 1_000))
                    .isEqualTo(SingleDocumentById.always());
            assertThat(rules.forCollection(access, new MongoNamespace("r.missing"), 1_000))
                    .isEqualTo(SingleDocumentById.always());
            int asked = cluster.truth().commands("listCollections").size();
            rules.forCollection(access, new MongoNamespace("r.plain"), 1_000);
            assertThat(cluster.truth().commands("listCollections")).hasSize(asked);
            now.addAndGet(SingleDocumentRules.TIME_TO_LIVE.toNanos() + 1);
            rules.forCollection(access, new MongoNamespace("r.plain"), 1_000);
            assertThat(cluster.truth().commands("listCollections")).hasSize(asked + 1);
        }
    }

    @Test
    void aFailedRead_keepsTheDriversForm_andIsAskedAgainAfterTheShortTimeToLive() {
        try (EmulatedReplicaSet cluster = EmulatedCluster.replicaSet().start();
                MongoClient client = MongoClients.create(cluster.connectionString())) {
            client.getDatabase("admin")
                    .runCommand(new Document("configureFailPoint", "failCommand")
                            .append("mode", new Document("times", 1))
                            .append(
                                    "data",
                                    new Document("failCommands", List.of("listCollections")).append("errorCode", 13)));
            AtomicLong now = new AtomicLong();
            SingleDocumentRules rules = new SingleDocumentRules(now::get);
            CatalogSource access = CatalogSource.of(ClientPort.of(client));

            SingleDocumentById failed = rules.forCollection(access, new MongoNamespace("r.c"), 1_000);
            now.addAndGet(SingleDocumentRules.FAILURE_TIME_TO_LIVE.toNanos() + 1);
            SingleDocumentById later = rules.forCollection(access, new MongoNamespace("r.c"), 1_000);

            assertThat(failed.isNever()).isTrue();
            assertThat(failed.toString()).contains("listCollections: Unauthorized");
            assertThat(later).isEqualTo(SingleDocumentById.always());
        }
    }

    @Test
    void listCollectionsEntry_nonSimpleDefaultCollation_keepsCollatableIdsMulti_timeSeriesAndViewsKeepEverything() {
        // Entries as mongod returns them (src/mongo/db/commands/list_collections.cpp: name, type, options, info).
        BsonDocument french = BsonDocument.parse("{name: 'c', type: 'collection', options: {collation: {locale: 'fr',"
                + " strength: 2, version: '57.1'}}, info: {readOnly: false}}");
        BsonDocument simple =
                BsonDocument.parse("{name: 'c', type: 'collection', options: {collation: {locale: 'simple'}}}");
        BsonDocument series =
                BsonDocument.parse("{name: 'm', type: 'timeseries', options: {timeseries: {timeField: 't'}}}");
        BsonDocument view = BsonDocument.parse("{name: 'v', type: 'view', options: {viewOn: 'c', pipeline: []}}");

        assertThat(SingleDocumentRules.fromCollectionInfo(french))
                .isEqualTo(SingleDocumentById.always()
                        .withoutCollatableIds(
                                "the collection's default collation (fr) can make different string _ids" + " equal"));
        assertThat(SingleDocumentRules.fromCollectionInfo(simple)).isEqualTo(SingleDocumentById.always());
        assertThat(SingleDocumentRules.fromCollectionInfo(null)).isEqualTo(SingleDocumentById.always());
        assertThat(SingleDocumentRules.fromCollectionInfo(series).toString())
                .contains("never: the collection is a timeseries");
        assertThat(SingleDocumentRules.fromCollectionInfo(view).toString()).contains("never: the collection is a view");
    }

    /**
     * Read from a deployment: the collection's own {@code listCollections} entry (the name filter applied, another
     * collection listed first not taken for it), its default collation as the server reports it
     * ({@code src/mongo/db/catalog/collection_options.cpp}), so collatable {@code _id}s keep the driver's form.
     */
    @Test
    void replicaSet_aCollectionWithADefaultCollation_keepsCollatableIdsMulti_nextToAPlainOne() {
        try (EmulatedReplicaSet cluster = EmulatedCluster.replicaSet().start();
                MongoClient client = MongoClients.create(cluster.connectionString())) {
            client.getDatabase("r").getCollection("aPlain").insertOne(new Document("_id", 1));
            client.getDatabase("r")
                    .createCollection(
                            "caseless",
                            new com.mongodb.client.model.CreateCollectionOptions()
                                    .collation(com.mongodb.client.model.Collation.builder()
                                            .locale("en")
                                            .collationStrength(com.mongodb.client.model.CollationStrength.SECONDARY)
                                            .build()));
            SingleDocumentRules rules = new SingleDocumentRules();
            CatalogSource access = CatalogSource.of(ClientPort.of(client));

            assertThat(rules.forCollection(access, new MongoNamespace("r.caseless"), 1_000))
                    .isEqualTo(SingleDocumentById.always()
                            .withoutCollatableIds(
                                    "the collection's default collation (en) can make different string _ids equal"));
            assertThat(rules.forCollection(access, new MongoNamespace("r.aPlain"), 1_000))
                    .isEqualTo(SingleDocumentById.always());
        }
    }

    @Test
    void sharded_onHashedId_everyPinnedWriteIsSingle_onAnotherKey_upsertsNeedTheShardKey() {
        try (EmulatedShardedCluster cluster =
                        EmulatedCluster.sharded().shards(2).start();
                MongoClient client = MongoClients.create(cluster.connectionString())) {
            cluster.shardCollection("s.byId", ShardKey.of(new BsonDocument("_id", new BsonString("hashed"))));
            cluster.shardCollection("s.byTenant", ShardKey.of(new BsonDocument("tenant", new BsonInt32(1))));
            SingleDocumentRules rules = new SingleDocumentRules();
            CatalogSource access = CatalogSource.of(ClientPort.of(client));

            assertThat(rules.forCollection(access, new MongoNamespace("s.byId"), 1_000))
                    .isEqualTo(SingleDocumentById.always());
            assertThat(rules.forCollection(access, new MongoNamespace("s.byTenant"), 1_000))
                    .isEqualTo(SingleDocumentById.always().upsertsOnlyWithShardKey(List.of("tenant")));
            assertThat(rules.forCollection(access, new MongoNamespace("s.unsharded"), 1_000))
                    .isEqualTo(SingleDocumentById.always());
        }
    }
}
