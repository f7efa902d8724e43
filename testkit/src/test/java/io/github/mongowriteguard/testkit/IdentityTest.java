package io.github.mongowriteguard.testkit;

import static org.assertj.core.api.Assertions.assertThat;

import com.mongodb.client.MongoClient;
import com.mongodb.client.MongoCollection;
import com.mongodb.connection.ClusterType;
import com.mongodb.connection.ServerDescription;
import com.mongodb.connection.ServerType;
import io.github.mongowriteguard.testkit.server.ServerVersion;
import org.bson.Document;
import org.junit.jupiter.api.Test;

@org.junit.jupiter.api.Tag("deployment") // runs against -Dmongo.uri (the real-mongodb profile)
class IdentityTest {

    @Test
    void driverSeesAReplicaSetPrimaryWithSessions() {
        try (TestDeployment deployment = TestDeployment.replicaSet();
                MongoClient client = Clients.client(deployment.connectionString())) {
            client.getDatabase("admin").runCommand(new Document("ping", 1));

            assertThat(client.getClusterDescription().getType()).isEqualTo(ClusterType.REPLICA_SET);
            ServerDescription primary = client.getClusterDescription().getServerDescriptions().stream()
                    .filter(ServerDescription::isPrimary)
                    .findFirst()
                    .orElseThrow();
            assertThat(primary.getType()).isEqualTo(ServerType.REPLICA_SET_PRIMARY);
            assertThat(primary.getLogicalSessionTimeoutMinutes()).isNotNull();
            assertThat(primary.getSetName()).isNotBlank();
            if (deployment.isEmulated()) {
                assertThat(primary.getMaxWireVersion()).isEqualTo(9);
                assertThat(primary.getHosts())
                        .containsExactly(primary.getAddress().toString());
            }
        }
    }

    @Test
    void retryableWritesCarrySessionAndTransactionNumber() {
        Clients.Sent sent = new Clients.Sent();
        try (TestDeployment deployment = TestDeployment.replicaSet();
                MongoClient client = Clients.client(deployment.connectionString(), b -> b.addCommandListener(sent))) {
            MongoCollection<Document> collection =
                    client.getDatabase("identity").getCollection("c");
            collection.drop();
            collection.insertOne(new Document("_id", 1));
            collection.updateMany(new Document(), new Document("$set", new Document("x", 1)));

            assertThat(sent.commands("insert"))
                    .singleElement()
                    .satisfies(insert -> assertThat(insert).containsKeys("lsid", "txnNumber"));
            assertThat(sent.commands("update"))
                    .singleElement()
                    .satisfies(update -> assertThat(update).containsKey("lsid").doesNotContainKey("txnNumber"));
        }
    }

    @Test
    void serverVersionIsChosenPerInstance() {
        try (EmulatedReplicaSet cluster = EmulatedCluster.replicaSet()
                        .serverVersion(ServerVersion.V6_0)
                        .start();
                MongoClient client = Clients.client(cluster.connectionString())) {
            Document buildInfo = client.getDatabase("admin").runCommand(new Document("buildInfo", 1));

            assertThat(buildInfo.getString("version")).isEqualTo("6.0.0");
            assertThat(client.getClusterDescription()
                            .getServerDescriptions()
                            .get(0)
                            .getMaxWireVersion())
                    .isEqualTo(17);
        }
    }

    @Test
    void crudRunsOnTheStorageEngine() {
        try (TestDeployment deployment = TestDeployment.replicaSet();
                MongoClient client = Clients.client(deployment.connectionString())) {
            MongoCollection<Document> collection =
                    client.getDatabase("identity").getCollection("crud");
            collection.drop();
            collection.insertMany(
                    java.util.List.of(new Document("_id", 1).append("v", 1), new Document("_id", 2).append("v", 2)));
            collection.updateOne(new Document("_id", 1), new Document("$inc", new Document("v", 10)));
            collection.deleteOne(new Document("_id", 2));

            assertThat(collection.find().into(new java.util.ArrayList<>()))
                    .containsExactly(new Document("_id", 1).append("v", 11));
        }
    }
}
