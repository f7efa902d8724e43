package io.github.mongowriteguard.testkit.node;

import static org.assertj.core.api.Assertions.assertThat;

import com.mongodb.client.MongoClient;
import io.github.mongowriteguard.testkit.Clients;
import io.github.mongowriteguard.testkit.EmulatedCluster;
import io.github.mongowriteguard.testkit.EmulatedReplicaSet;
import org.bson.Document;
import org.junit.jupiter.api.Test;

/**
 * {@link GenericCommands}: the administrative commands a client runs beside its writes, as mongod answers them
 * (mongodb/mongo {@code src/mongo/db/commands/generic.cpp}, {@code server_status.cpp}).
 */
class GenericCommandsTest {

    @Test
    void serverStatus_countsCommandsLikeMongod() {
        try (EmulatedReplicaSet cluster = EmulatedCluster.replicaSet().start();
                MongoClient client = Clients.client(cluster.connectionString())) {
            client.getDatabase("intro").getCollection("c").insertOne(new Document("v", 1));
            client.getDatabase("intro").getCollection("c").insertOne(new Document("v", 2));

            Document status = client.getDatabase("admin").runCommand(new Document("serverStatus", 1));
            Document insert = status.get("metrics", Document.class)
                    .get("commands", Document.class)
                    .get("insert", Document.class);

            assertThat(insert.get("total", Number.class).longValue()).isEqualTo(2);
            assertThat(cluster.primary().commandCount("insert")).isEqualTo(2);
        }
    }
}
