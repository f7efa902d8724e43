package io.github.mongowriteguard.testkit;

import static org.assertj.core.api.Assertions.assertThat;

import com.mongodb.client.MongoClient;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.PrintStream;
import java.net.ServerSocket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.bson.Document;
import org.junit.jupiter.api.Test;
import picocli.CommandLine;

/** testkit.jar's command line: every option with every topology, refusals before anything starts, the documented line. */
class MainTest {
    private final ByteArrayOutputStream out = new ByteArrayOutputStream();
    private final ByteArrayOutputStream err = new ByteArrayOutputStream();

    private CommandLine cli() {
        return Main.commandLine(
                new PrintStream(out, true, StandardCharsets.UTF_8),
                new PrintStream(err, true, StandardCharsets.UTF_8),
                new CountDownLatch(1),
                false);
    }

    /** The deployment the arguments describe, started without serving. */
    private EmulatedCluster build(String... args) {
        CommandLine cli = cli();
        cli.parseArgs(args);
        Main main = cli.getCommand();
        return main.build();
    }

    private static int freePorts(int count) throws IOException {
        for (int attempt = 0; attempt < 50; attempt++) {
            int first;
            try (ServerSocket probe = new ServerSocket(0)) {
                first = probe.getLocalPort();
            }
            if (first + count > 65535) {
                continue;
            }
            boolean free = true;
            for (int i = 0; i < count && free; i++) {
                try (ServerSocket ignored = new ServerSocket(first + i)) {
                    // free
                } catch (IOException inUse) {
                    free = false;
                }
            }
            if (free) {
                return first;
            }
        }
        throw new IllegalStateException("no " + count + " free consecutive ports");
    }

    @Test
    void port_withShards_isTheFirstMongosPort_andTheNextMongosTakesTheNextPort() throws IOException {
        int port = freePorts(2);
        try (EmulatedCluster cluster = build("--shards", "2", "--mongos", "2", "--port", String.valueOf(port))) {
            EmulatedShardedCluster sharded = (EmulatedShardedCluster) cluster;
            assertThat(sharded.mongos(0).address()).endsWith(":" + port);
            assertThat(sharded.mongos(1).address()).endsWith(":" + (port + 1));
            assertThat(cluster.connectionString()).contains(":" + port);
            try (MongoClient client = Clients.client(cluster.connectionString())) {
                client.getDatabase("shop").getCollection("orders").insertOne(new Document("_id", 1));
            }
            assertThat(sharded.routing().childBatches()).isEqualTo(1);
        }
    }

    @Test
    void port_withMembers_isTheFirstMembersPort() throws IOException {
        int port = freePorts(3);
        try (EmulatedCluster cluster = build("--members", "3", "--port", String.valueOf(port))) {
            EmulatedReplicaSet set = (EmulatedReplicaSet) cluster;
            assertThat(set.members())
                    .extracting(node -> node.address().replaceAll(".*:", ""))
                    .containsExactly(String.valueOf(port), String.valueOf(port + 1), String.valueOf(port + 2));
        }
    }

    @Test
    void members_withShards_areEachShardsMembers_replicatingFromThree() {
        try (EmulatedCluster cluster = build("--shards", "2", "--members", "3", "--version", "6.0")) {
            EmulatedShardedCluster sharded = (EmulatedShardedCluster) cluster;
            assertThat(sharded.shardSet(0).members()).hasSize(3);
            assertThat(sharded.shardSet(1).replicates()).isTrue();
        }
    }

    @Test
    void shardCollection_shardsWithTheGivenKey_orAHashedId() {
        try (EmulatedCluster cluster = build(
                "--shards",
                "3",
                "--shard-collection",
                "shop.orders",
                "--shard-collection",
                "shop.carts={customerId: 1}")) {
            EmulatedShardedCluster sharded = (EmulatedShardedCluster) cluster;
            assertThat(sharded.chunkMap("shop.orders").key().toString()).contains("hashed");
            assertThat(sharded.chunkMap("shop.carts").key().toString()).contains("customerId");
        }
    }

    @Test
    void mongosAlone_impliesTwoShards() {
        try (EmulatedCluster cluster = build("--mongos", "2")) {
            assertThat(((EmulatedShardedCluster) cluster).shardNames()).hasSize(2);
        }
    }

    @Test
    void invalidValues_exitWith2_namingTheOption_beforeAnythingStarts() {
        assertThat(cli().execute("--shards", "0")).isEqualTo(2);
        assertThat(cli().execute("--version", "9.9")).isEqualTo(2);
        assertThat(cli().execute("--port", "70000")).isEqualTo(2);
        assertThat(cli().execute("--members", "9")).isEqualTo(2);
        assertThat(cli().execute("--shard-collection", "shop.orders")).isEqualTo(2);
        assertThat(cli().execute("--shards", "2", "--shard-collection", "orders"))
                .isEqualTo(2);
        assertThat(cli().execute("--shards", "2", "--shard-collection", "shop.orders={nope"))
                .isEqualTo(2);
        assertThat(cli().execute("--shard", "2")).isEqualTo(2);
        assertThat(err.toString(StandardCharsets.UTF_8))
                .contains("testkit: --shards: shards (0) must be 1-64")
                .contains("testkit: --version: serverVersion '9.9' is not emulated")
                .contains("testkit: --members (9) must be 1-7")
                .contains("testkit: --port: port (70000) must be 0 (any free port) or 1-65535")
                .contains("testkit: --shard-collection needs a sharded cluster; add --shards")
                .contains("'orders' must be database.collection")
                .contains("testkit: --shard-collection shop.orders:")
                .contains("Unknown options: '--shard', '2'");
        assertThat(out.toString(StandardCharsets.UTF_8)).isEmpty(); // no connection string: nothing started
    }

    @Test
    void serves_printingTheConnectionString_untilStopped() throws Exception {
        CountDownLatch stop = new CountDownLatch(1);
        CommandLine cli = Main.commandLine(new PrintStream(out, true, StandardCharsets.UTF_8), System.err, stop, false);
        Thread serving = new Thread(() -> cli.execute("--shards", "2"));
        serving.start();
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
        while (!out.toString(StandardCharsets.UTF_8).contains("mongodb://") && System.nanoTime() < deadline) {
            Thread.sleep(20);
        }
        String connection = out.toString(StandardCharsets.UTF_8).strip();
        try (MongoClient client = Clients.client(connection)) {
            client.getDatabase("shop").getCollection("orders").insertOne(new Document("_id", 1));
            assertThat(client.getDatabase("shop").getCollection("orders").countDocuments())
                    .isEqualTo(1);
        } finally {
            stop.countDown();
            serving.join(TimeUnit.SECONDS.toMillis(30));
        }
        assertThat(serving.isAlive()).isFalse();
    }

    @Test
    void documentedUsageLine_isTheHelpsSynopsis() throws IOException {
        CommandLine cli = cli();
        cli.setUsageHelpWidth(1000);
        String synopsis = cli.getHelp().synopsis(0).strip().replaceFirst("^Usage: ", "");
        // the README's testing section sends the reader to docs/testing.md, which shows the command line
        String testing = Files.readString(Path.of("..", "docs", "testing.md"));
        assertThat(testing).as("docs/testing.md shows `%s`", synopsis).contains("`" + synopsis + "`");
        assertThat(Files.readString(Path.of("..", "README.md"))).contains("](docs/testing.md)");
    }
}
