package io.github.mongowriteguard.testkit.node;

import static org.assertj.core.api.Assertions.assertThat;

import com.mongodb.client.MongoClient;
import com.mongodb.client.model.InsertOneOptions;
import io.github.mongowriteguard.testkit.Clients;
import io.github.mongowriteguard.testkit.EmulatedCluster;
import io.github.mongowriteguard.testkit.EmulatedReplicaSet;
import io.github.mongowriteguard.testkit.EmulatedShardedCluster;
import io.github.mongowriteguard.testkit.stall.Stall;
import io.github.mongowriteguard.testkit.stall.StallHandle;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.bson.Document;
import org.junit.jupiter.api.Test;

/**
 * {@code currentOp} truncates a {@code command} larger than 1,000 bytes to {@code {$truncated: <text cut to 1,000
 * characters, ending "...">, comment: <comment>}} (mongodb/mongo {@code src/mongo/db/curop.cpp},
 * {@code appendAsObjOrString} with {@code maxQuerySize{truncateOps, 1000}}, 4.2 to 7.0); the {@code currentOp}
 * command always truncates ({@code src/mongo/db/commands/current_op_common.cpp}: {@code truncateOps: true} unless
 * test commands are on and {@code $truncateOps: false}), the {@code $currentOp} stage only with
 * {@code truncateOps: true}. The {@code command} shown is the OP_MSG body: fields sent as document sequences (the
 * driver's bulk path sends an insert's {@code documents} so) are not part of it.
 */
class CurrentOpTruncationTest {
    private static final String PADDING = "x".repeat(1_500);

    @Test
    void largeCommand_isTruncatedToItsTextAndComment_soOnlyTopLevelLsidAndTheCommentStillFindIt() throws Exception {
        try (EmulatedReplicaSet cluster = EmulatedCluster.replicaSet().start();
                MongoClient writer = Clients.client(cluster.connectionString());
                MongoClient observer = Clients.client(cluster.connectionString());
                StallHandle stall = cluster.primary().stall(Stall.uninterruptible("trunc.c", Duration.ofSeconds(1)))) {
            // runCommand sends the whole command as the body, as the guard does: > 1,000 bytes.
            CompletableFuture<Document> write = CompletableFuture.supplyAsync(() -> writer.getDatabase("trunc")
                    .runCommand(new Document("insert", "c")
                            .append("documents", List.of(new Document("pad", PADDING)))
                            .append("comment", "mwg:large")));
            Document op = waitForOp(observer, new Document("ns", "trunc.c"));

            Document command = op.get("command", Document.class);
            assertThat(command.keySet()).containsExactly("$truncated", "comment");
            assertThat(command.getString("comment")).isEqualTo("mwg:large");
            String text = command.getString("$truncated");
            assertThat(text)
                    .hasSize(1_000)
                    .startsWith("{ insert: \"c\", documents: [ { pad: \"xxx")
                    .endsWith("...");

            Document lsid = op.get("lsid", Document.class);
            assertThat(currentOp(observer, new Document("command.comment", "mwg:large")))
                    .hasSize(1);
            assertThat(currentOp(observer, new Document("lsid.id", lsid.get("id"))))
                    .hasSize(1);
            assertThat(currentOp(observer, new Document("command.insert", "c"))).isEmpty();
            // $truncateOps: false (test commands on) and the $currentOp stage by default show the whole command.
            assertThat(currentOp(observer, new Document("command.insert", "c").append("$truncateOps", false)))
                    .hasSize(1);
            List<Document> whole = observer.getDatabase("admin")
                    .aggregate(List.of(
                            new Document("$currentOp", new Document("allUsers", true)),
                            new Document("$match", new Document("command.comment", "mwg:large"))))
                    .into(new ArrayList<>());
            assertThat(whole)
                    .singleElement()
                    .satisfies(o -> assertThat(o.get("command", Document.class)).containsKey("documents"));
            List<Document> truncated = observer.getDatabase("admin")
                    .aggregate(List.of(
                            new Document("$currentOp", new Document("allUsers", true).append("truncateOps", true)),
                            new Document("$match", new Document("command.comment", "mwg:large"))))
                    .into(new ArrayList<>());
            assertThat(truncated)
                    .singleElement()
                    .satisfies(o -> assertThat(o.get("command", Document.class)).containsKey("$truncated"));
            write.get(10, TimeUnit.SECONDS);
        }
    }

    @Test
    void documentsSentAsADocumentSequence_areNotPartOfTheCommandShown() throws Exception {
        try (EmulatedReplicaSet cluster = EmulatedCluster.replicaSet().start();
                MongoClient writer = Clients.client(cluster.connectionString());
                MongoClient observer = Clients.client(cluster.connectionString());
                StallHandle stall =
                        cluster.primary().stall(Stall.uninterruptible("trunc.seq", Duration.ofMillis(700)))) {
            CompletableFuture<Void> write = CompletableFuture.runAsync(() -> writer.getDatabase("trunc")
                    .getCollection("seq")
                    .insertOne(new Document("pad", PADDING), new InsertOneOptions().comment("seq")));
            Document op = waitForOp(observer, new Document("ns", "trunc.seq"));

            Document command = op.get("command", Document.class);
            assertThat(command)
                    .containsKeys("insert", "lsid", "txnNumber", "comment")
                    .doesNotContainKeys("documents", "$truncated");
            write.get(10, TimeUnit.SECONDS);
        }
    }

    @Test
    void throughMongos_theShardsChildCommandCarriesItsDocuments_andIsTruncated() throws Exception {
        try (EmulatedShardedCluster cluster =
                        EmulatedCluster.sharded().shards(2).start();
                MongoClient writer = Clients.client(cluster.connectionString());
                MongoClient observer = Clients.client(cluster.connectionString());
                StallHandle stall = cluster.shard(0).stall(Stall.uninterruptible("trunc.c", Duration.ofMillis(700)))) {
            // The driver sends documents as a sequence; mongos' child batch to the shard has them in its body.
            CompletableFuture<Void> write = CompletableFuture.runAsync(() -> writer.getDatabase("trunc")
                    .getCollection("c")
                    .insertOne(new Document("pad", PADDING), new InsertOneOptions().comment("through-mongos")));
            Document op = waitForOp(observer, new Document("ns", "trunc.c"));

            assertThat(op.getString("shard")).isEqualTo("shard00");
            assertThat(op.get("command", Document.class).keySet()).containsExactly("$truncated", "comment");
            assertThat(op.get("command", Document.class).getString("comment")).isEqualTo("through-mongos");
            write.get(10, TimeUnit.SECONDS);
        }
    }

    @Test
    void smallCommand_isShownWhole() {
        Document small = new Document("insert", "c").append("documents", List.of(new Document("v", 1)));
        org.bson.BsonDocument bson = small.toBsonDocument();
        assertThat(CommandTruncation.truncated(bson)).isSameAs(bson);
        assertThat(CommandTruncation.toShellString(bson)).isEqualTo("{ insert: \"c\", documents: [ { v: 1 } ] }");
    }

    private static List<Document> currentOp(MongoClient client, Document filter) {
        Document command = new Document("currentOp", 1);
        command.putAll(filter);
        return client.getDatabase("admin").runCommand(command).getList("inprog", Document.class);
    }

    private static Document waitForOp(MongoClient client, Document filter) throws InterruptedException {
        long until = System.nanoTime() + Duration.ofSeconds(10).toNanos();
        while (System.nanoTime() < until) {
            List<Document> ops = currentOp(client, filter);
            if (!ops.isEmpty()) {
                return ops.get(0);
            }
            Thread.sleep(10);
        }
        throw new AssertionError("no operation matching " + filter.toJson());
    }
}
