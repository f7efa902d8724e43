package io.github.mongowriteguard.testkit;

import io.github.mongowriteguard.testkit.server.ServerVersion;
import io.github.mongowriteguard.testkit.sharding.ShardKey;
import java.io.PrintStream;
import java.io.PrintWriter;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Callable;
import java.util.concurrent.CountDownLatch;
import org.bson.BsonDocument;
import org.bson.json.JsonParseException;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.ParameterException;
import picocli.CommandLine.Spec;

/**
 * {@code java -jar testkit/target/testkit.jar}: serves an emulated replica set, with {@code --shards} a sharded
 * cluster, or with {@code --standalone} a standalone mongod, on loopback ports until stopped (Ctrl-C), after printing its connection string. Every option applies to
 * both topologies: {@code --port} is the first member's or the first mongos's port, {@code --members} the members of
 * the set or of each shard.
 */
@Command(
        name = Main.NAME,
        sortOptions = false,
        usageHelpAutoWidth = true,
        mixinStandardHelpOptions = false,
        description = {
            "Serves an emulated MongoDB deployment (real wire protocol) on loopback ports until stopped (Ctrl-C);"
                    + " prints its connection string first. Without --shards, --mongos or --standalone: a replica set."
        },
        exitCodeListHeading = "%nExit codes:%n",
        exitCodeList = {"0:stopped", "1:the deployment did not start (e.g. a port in use)", "2:invalid command line"})
public final class Main implements Callable<Integer> {
    /** The command as docs/testing.md shows it. */
    static final String NAME = "java -jar testkit/target/testkit.jar";

    @Spec
    CommandSpec spec;

    @Option(
            names = "--port",
            paramLabel = "N",
            description = "Port of the replica set's first member, or of the first mongos (each next one on the next"
                    + " port). Default: any free port.")
    int port;

    @Option(
            names = "--version",
            paramLabel = "V",
            description = "Server version to emulate: 4.2, 4.4, 5.0, 6.0, 7.0 or 8.0. Default: ${DEFAULT-VALUE}.")
    String version = "4.4";

    @Option(
            names = "--members",
            paramLabel = "N",
            description = "Members of the replica set, or of each shard (3 or more: replicating members with"
                    + " elections). Default: ${DEFAULT-VALUE}.")
    int members = 1;

    @Option(
            names = "--standalone",
            description = "Serve a standalone mongod (no replica set: no retryable writes, no transactions; a"
                    + " txnNumber is refused as the server refuses it).")
    boolean standalone;

    @Option(
            names = "--shards",
            paramLabel = "S",
            description = "Serve a sharded cluster of S shards (1-64) behind mongos.")
    Integer shards;

    @Option(
            names = "--mongos",
            paramLabel = "M",
            description = "Mongos routers of the sharded cluster (1-16; alone, it implies --shards 2). Default: 1.")
    Integer mongos;

    @Option(
            names = "--shard-collection",
            paramLabel = "NS[=KEY]",
            description = "Shard a collection when the cluster starts, e.g. shop.orders or"
                    + " 'shop.orders={customerId: 1}' (default key: hashed _id); repeatable.")
    List<String> shardCollections = new ArrayList<>();

    @Option(names = "--verbose", description = "Log what the emulated servers do (INFO); by default only warnings.")
    boolean verbose;

    @Option(
            names = {"-h", "--help"},
            usageHelp = true,
            description = "Show this help and exit.")
    boolean help;

    private final PrintStream out;
    private final CountDownLatch stop;
    private final boolean shutdownHook;

    Main(PrintStream out, CountDownLatch stop, boolean shutdownHook) {
        this.out = out;
        this.stop = stop;
        this.shutdownHook = shutdownHook;
    }

    /**
     * Starts the emulated deployment and serves until the JVM is stopped.
     *
     * @param args the options; {@code --help} lists them
     */
    public static void main(String[] args) {
        CountDownLatch stop = new CountDownLatch(1);
        int code = commandLine(System.out, System.err, stop, true).execute(args);
        if (code != 0 || stop.getCount() == 0) {
            System.exit(code);
        }
    }

    /**
     * The command line: usage errors print the message naming the option and exit with 2, before anything starts.
     *
     * @param out  where the connection string and the help go
     * @param err  where errors go
     * @param stop counted down to stop serving
     * @param shutdownHook whether the JVM's shutdown (Ctrl-C) stops serving, as in {@link #main}
     * @return the command line
     */
    static CommandLine commandLine(PrintStream out, PrintStream err, CountDownLatch stop, boolean shutdownHook) {
        CommandLine cli = new CommandLine(new Main(out, stop, shutdownHook));
        cli.setOut(new PrintWriter(out, true, StandardCharsets.UTF_8));
        cli.setErr(new PrintWriter(err, true, StandardCharsets.UTF_8));
        cli.setParameterExceptionHandler((e, args) -> {
            PrintWriter w = e.getCommandLine().getErr();
            w.println("testkit: " + e.getMessage());
            if (!CommandLine.UnmatchedArgumentException.printSuggestions(e, w)) {
                w.println("see: " + NAME + " --help");
            }
            w.flush();
            return e.getCommandLine().getCommandSpec().exitCodeOnInvalidInput();
        });
        return cli;
    }

    @Override
    public Integer call() throws InterruptedException {
        // Before the first logger exists: the emulator's engine logs every database and collection it creates.
        System.setProperty("org.slf4j.simpleLogger.defaultLogLevel", verbose ? "info" : "warn");
        EmulatedCluster cluster = build();
        if (shutdownHook) {
            Runtime.getRuntime().addShutdownHook(new Thread(() -> {
                cluster.close();
                stop.countDown();
            }));
        }
        out.println(cluster.connectionString());
        out.flush();
        stop.await();
        cluster.close();
        return 0;
    }

    /** The deployment the options describe, started; every option checked first. */
    EmulatedCluster build() {
        ServerVersion serverVersion = parse("--version", () -> ServerVersion.parse(version));
        if (members < 1 || members > 7) {
            throw invalid("--members (" + members + ") must be 1-7");
        }
        boolean sharded = shards != null || mongos != null;
        Map<String, BsonDocument> collections = new LinkedHashMap<>();
        for (String collection : shardCollections) {
            int equals = collection.indexOf('=');
            String namespace = equals < 0 ? collection : collection.substring(0, equals);
            String key = equals < 0 ? "{_id: \"hashed\"}" : collection.substring(equals + 1);
            if (namespace.indexOf('.') <= 0) {
                throw invalid("--shard-collection: '" + namespace + "' must be database.collection, e.g. shop.orders");
            }
            collections.put(namespace, parse("--shard-collection " + namespace, () -> BsonDocument.parse(key)));
        }
        if (standalone) {
            if (sharded || members != 1) {
                throw invalid("--standalone is one mongod: leave out --shards, --mongos and --members");
            }
            EmulatedStandalone.Builder server = EmulatedCluster.standalone().serverVersion(serverVersion);
            parse("--port", () -> server.port(port));
            return parse("the options", server::start);
        }
        if (!sharded && !collections.isEmpty()) {
            throw invalid("--shard-collection needs a sharded cluster; add --shards, e.g. --shards 3");
        }
        if (!sharded) {
            EmulatedReplicaSet.Builder set = EmulatedCluster.replicaSet().serverVersion(serverVersion);
            parse("--port", () -> set.port(port));
            parse("--members", () -> set.members(members));
            return parse("the options", set::start);
        }
        EmulatedShardedCluster.Builder builder = EmulatedCluster.sharded().serverVersion(serverVersion);
        parse("--port", () -> builder.port(port));
        parse("--shards", () -> builder.shards(shards != null ? shards : 2));
        parse("--mongos", () -> builder.mongos(mongos != null ? mongos : 1));
        if (members > 1) {
            builder.nodesPerShard(members).replicatingShards(members >= 3);
        }
        EmulatedShardedCluster cluster = parse("the options", builder::start);
        collections.forEach((namespace, key) -> cluster.shardCollection(namespace, ShardKey.of(key)));
        return cluster;
    }

    /** Runs a step that validates a value; its refusal becomes a usage error naming the option. */
    private <T> T parse(String what, java.util.function.Supplier<T> step) {
        try {
            return step.get();
        } catch (IllegalArgumentException | IllegalStateException | JsonParseException e) {
            throw invalid(what + ": " + e.getMessage());
        }
    }

    private ParameterException invalid(String message) {
        return new ParameterException(spec.commandLine(), message);
    }
}
