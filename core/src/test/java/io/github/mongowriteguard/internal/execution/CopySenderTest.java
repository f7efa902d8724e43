package io.github.mongowriteguard.internal.execution;

import static org.assertj.core.api.Assertions.assertThat;

import com.mongodb.ConnectionString;
import com.mongodb.MongoClientSettings;
import com.mongodb.client.ClientSession;
import com.mongodb.client.MongoClient;
import com.mongodb.client.MongoClients;
import com.mongodb.client.model.BulkWriteOptions;
import com.mongodb.client.model.InsertOneModel;
import com.mongodb.event.CommandListener;
import com.mongodb.event.CommandStartedEvent;
import io.github.mongowriteguard.GuardedCollection;
import io.github.mongowriteguard.WriteGuard;
import io.github.mongowriteguard.copies.CopyRecord;
import io.github.mongowriteguard.outcome.WriteOutcome;
import io.github.mongowriteguard.testkit.EmulatedCluster;
import io.github.mongowriteguard.testkit.EmulatedReplicaSet;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import org.bson.Document;
import org.junit.jupiter.api.Test;

/**
 * The copies {@link CopySender} records name the session their command was sent in, as the server saw it: call after
 * call on the sessions the driver's pool hands out again, and when calls switch between sessions (the sender keeps the
 * text of the last session id it saw).
 */
class CopySenderTest {

    @Test
    void everyCopy_namesTheSessionItsCommandWasSentIn() {
        List<String> sentLsids = new CopyOnWriteArrayList<>();
        WriteGuard guard = WriteGuard.create();
        try (EmulatedReplicaSet cluster = EmulatedCluster.replicaSet().start();
                MongoClient client = MongoClients.create(guard.configure(MongoClientSettings.builder()
                                .applyConnectionString(new ConnectionString(cluster.connectionString()))
                                .addCommandListener(new CommandListener() {
                                    @Override
                                    public void commandStarted(CommandStartedEvent event) {
                                        if (event.getCommandName().equals("insert")) {
                                            sentLsids.add(event.getCommand()
                                                    .getDocument("lsid")
                                                    .getBinary("id")
                                                    .asUuid()
                                                    .toString());
                                        }
                                    }
                                }))
                        .build())) {
            GuardedCollection<Document> collection =
                    guard.guardCollection(client, client.getDatabase("db").getCollection("c"));
            List<String> recorded = new ArrayList<>();
            int id = 0;
            // the guard's own sessions, one call after another: the pool hands the same session out again
            for (int call = 0; call < 3; call++) {
                recorded.add(onlyCopy(collection.execute(List.of(insert(id++)), new BulkWriteOptions())));
            }
            // the caller's sessions, taking turns
            try (ClientSession first = client.startSession();
                    ClientSession second = client.startSession()) {
                for (ClientSession session : List.of(first, second, first, second)) {
                    recorded.add(onlyCopy(collection.execute(session, List.of(insert(id++)), new BulkWriteOptions())));
                }
                assertThat(lsid(first)).isNotEqualTo(lsid(second));
                assertThat(recorded.subList(3, 7))
                        .containsExactly(lsid(first), lsid(second), lsid(first), lsid(second));
            }

            assertThat(recorded).isEqualTo(sentLsids);
        }
    }

    private static InsertOneModel<Document> insert(int id) {
        return new InsertOneModel<>(new Document("_id", id));
    }

    private static String onlyCopy(WriteOutcome<Document> outcome) {
        assertThat(outcome.isComplete()).isTrue();
        assertThat(outcome.copies()).hasSize(1);
        CopyRecord copy = outcome.copies().get(0);
        return copy.lsid();
    }

    private static String lsid(ClientSession session) {
        return session.getServerSession()
                .getIdentifier()
                .getBinary("id")
                .asUuid()
                .toString();
    }
}
