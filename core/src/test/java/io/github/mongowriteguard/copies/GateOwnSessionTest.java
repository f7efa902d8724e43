package io.github.mongowriteguard.copies;

import static org.assertj.core.api.Assertions.assertThat;

import com.mongodb.ConnectionString;
import com.mongodb.MongoClientSettings;
import com.mongodb.client.ClientSession;
import com.mongodb.client.MongoClient;
import com.mongodb.client.MongoClients;
import com.mongodb.client.MongoDatabase;
import com.mongodb.event.CommandListener;
import com.mongodb.event.CommandStartedEvent;
import io.github.mongowriteguard.internal.copies.LiveCopyLedger;
import io.github.mongowriteguard.internal.copies.OverlapGate;
import io.github.mongowriteguard.testkit.EmulatedCluster;
import io.github.mongowriteguard.testkit.EmulatedReplicaSet;
import io.github.mongowriteguard.testkit.stall.Stall;
import io.github.mongowriteguard.testkit.stall.StallHandle;
import io.github.mongowriteguard.testkit.stall.StallMode;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Proxy;
import java.time.Duration;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import org.bson.BsonArray;
import org.bson.BsonBoolean;
import org.bson.BsonDocument;
import org.bson.BsonInt64;
import org.bson.BsonString;
import org.junit.jupiter.api.Test;

/**
 * The overlap gate asks {@code currentOp} for its own session, but does not take the answer's filtering on trust:
 * behind a server or proxy that ignores the {@code lsid.id} filter, another session's write (another user's) running
 * on the same collection, with the same {@code txnNumber}, is neither taken for the guard's copy (which would refuse
 * the retry) nor touched ({@code killSessions} is never sent for it).
 */
class GateOwnSessionTest {
    private static final String NS = "gate.records";

    @Test
    void anotherSessionsWrite_returnedDespiteTheLsidFilter_isIgnored_andNeverKilled() throws Exception {
        List<BsonDocument> gateCommands = new CopyOnWriteArrayList<>();
        try (EmulatedReplicaSet set = EmulatedCluster.replicaSet().start();
                MongoClient other = client(set.connectionString(), null);
                MongoClient gateClient = client(set.connectionString(), gateCommands);
                StallHandle stall = set.primary()
                        .stall(new Stall(NS, Stall.WRITE_COMMANDS, StallMode.UNINTERRUPTIBLE, Duration.ofSeconds(2)))) {
            // another session's write, with txnNumber 1 and no guard comment: it runs while the gate looks
            CompletableFuture<BsonDocument> theirs = CompletableFuture.supplyAsync(() -> {
                try (ClientSession session = other.startSession()) {
                    return other.getDatabase("gate")
                            .runCommand(
                                    session,
                                    new BsonDocument("insert", new BsonString("records"))
                                            .append(
                                                    "documents",
                                                    new BsonArray(
                                                            List.of(new BsonDocument("_id", new BsonString("theirs")))))
                                            .append("ordered", BsonBoolean.TRUE)
                                            .append("txnNumber", new BsonInt64(1)),
                                    BsonDocument.class);
                }
            });
            awaitRunning(set);
            // the guard's copy: a session of its own that runs nothing now
            LiveCopyLedger.Copy copy =
                    new LiveCopyLedger().start(NS, UUID.randomUUID().toString(), 1L, "mwg:test:1.1");
            copy.sent();
            copy.clientGaveUp();

            GateVerdict verdict = new OverlapGate(Duration.ofMillis(20))
                    .beforeRetry(ignoringLsidFilter(gateClient.getDatabase("admin")), copy, System.nanoTime(), 10);

            assertThat(verdict).isEqualTo(GateVerdict.PROCEED);
            assertThat(gateCommands).extracting(BsonDocument::getFirstKey).contains("currentOp");
            assertThat(gateCommands).extracting(BsonDocument::getFirstKey).doesNotContain("killSessions", "killOp");
            // the filter really was ignored: the server listed the other session's write to the gate
            assertThat(gateCommands.stream().filter(c -> c.getFirstKey().equals("currentOp")))
                    .allSatisfy(c -> assertThat(c).doesNotContainKey("lsid.id"));
            stall.release();
            assertThat(theirs.get(10, TimeUnit.SECONDS).getInt32("n").getValue())
                    .isEqualTo(1);
        }
    }

    @Test
    void applicationUserWithReadWriteOnly_seesOnlyItsOwnOperations_andLeavesAnotherUsersWriteAlone() throws Exception {
        List<BsonDocument> gateCommands = new CopyOnWriteArrayList<>();
        try (EmulatedReplicaSet set = EmulatedCluster.replicaSet()
                        .user("admin", "secret", "root")
                        .user("app", "secret", "readWrite@gate")
                        .user("other", "secret", "readWrite@gate")
                        .start();
                MongoClient other = client(as(set, "other"), null);
                MongoClient gateClient = client(as(set, "app"), gateCommands);
                StallHandle stall = set.primary()
                        .stall(new Stall(NS, Stall.WRITE_COMMANDS, StallMode.UNINTERRUPTIBLE, Duration.ofSeconds(2)))) {
            CompletableFuture<Void> theirs = CompletableFuture.runAsync(() -> other.getDatabase("gate")
                    .getCollection("records")
                    .insertOne(new org.bson.Document("_id", "theirs")));
            awaitRunning(as(set, "admin"));
            LiveCopyLedger.Copy copy =
                    new LiveCopyLedger().start(NS, UUID.randomUUID().toString(), 1L, "mwg:test:1.1");
            copy.sent();
            copy.clientGaveUp();

            GateVerdict verdict = new OverlapGate(Duration.ofMillis(20))
                    .beforeRetry(gateClient.getDatabase("admin"), copy, System.nanoTime(), 10);

            // without inprog the gate asks again with $ownOps (as the README says) and sees none of the other user's
            assertThat(verdict).isEqualTo(GateVerdict.PROCEED);
            assertThat(gateCommands.stream().filter(c -> c.getFirstKey().equals("currentOp")))
                    .anySatisfy(c -> assertThat(
                                    c.getBoolean("$ownOps", BsonBoolean.FALSE).getValue())
                            .isTrue());
            assertThat(gateCommands).extracting(BsonDocument::getFirstKey).doesNotContain("killSessions", "killOp");
            stall.release();
            theirs.get(10, TimeUnit.SECONDS);
        }
    }

    private static String as(EmulatedReplicaSet set, String user) {
        String withUser = set.connectionString().replace("mongodb://", "mongodb://" + user + ":secret@");
        return withUser + (withUser.contains("?") ? "&" : "?") + "authSource=admin";
    }

    /** Waits until the other session's insert shows in currentOp (it runs, held by the stall). */
    private static void awaitRunning(EmulatedReplicaSet set) throws InterruptedException {
        awaitRunning(set.connectionString());
    }

    private static void awaitRunning(String uri) throws InterruptedException {
        try (MongoClient probe = client(uri, null)) {
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
            while (System.nanoTime() < deadline) {
                BsonDocument reply = probe.getDatabase("admin")
                        .runCommand(
                                new BsonDocument("currentOp", BsonBoolean.TRUE).append("ns", new BsonString(NS)),
                                BsonDocument.class);
                if (!reply.getArray("inprog").isEmpty()) {
                    return;
                }
                Thread.sleep(20);
            }
            throw new AssertionError("the other session's write never showed in currentOp");
        }
    }

    /** The admin database behind a proxy that drops {@code currentOp}'s {@code lsid.id} filter before sending. */
    private static MongoDatabase ignoringLsidFilter(MongoDatabase admin) {
        return (MongoDatabase) Proxy.newProxyInstance(
                MongoDatabase.class.getClassLoader(), new Class<?>[] {MongoDatabase.class}, (proxy, method, args) -> {
                    if (method.getName().equals("runCommand")
                            && args != null
                            && args[0] instanceof BsonDocument command
                            && command.getFirstKey().equals("currentOp")) {
                        BsonDocument unfiltered = command.clone();
                        unfiltered.remove("lsid.id");
                        args[0] = unfiltered;
                    }
                    try {
                        return method.invoke(admin, args);
                    } catch (InvocationTargetException e) {
                        throw e.getCause();
                    }
                });
    }

    private static MongoClient client(String uri, List<BsonDocument> recorded) {
        MongoClientSettings.Builder builder = MongoClientSettings.builder()
                .applyConnectionString(new ConnectionString(uri))
                .retryWrites(false)
                .applyToClusterSettings(c -> c.serverSelectionTimeout(5, TimeUnit.SECONDS));
        if (recorded != null) {
            builder.addCommandListener(new CommandListener() {
                @Override
                public void commandStarted(CommandStartedEvent event) {
                    recorded.add(event.getCommand().clone());
                }
            });
        }
        return MongoClients.create(builder.build());
    }
}
