package io.github.mongowriteguard.testkit;

import java.util.concurrent.CountDownLatch;

/**
 * {@code java -jar testkit/target/testkit.jar [--port N] [--version 4.4] [--members N] [--shards S [--mongos M]]}:
 * starts an emulated replica set (of N replicating members with {@code --members}; or, with {@code --shards}, a sharded
 * cluster), prints its connection string and serves until stopped (Ctrl-C).
 */
public final class Main {
    private Main() {}

    /**
     * Starts the emulated deployment and serves until the JVM is stopped.
     *
     * @param args {@code [--port N] [--version 4.4] [--shards S [--mongos M]]}
     * @throws InterruptedException when interrupted while serving
     */
    public static void main(String[] args) throws InterruptedException {
        EmulatedReplicaSet.Builder builder = EmulatedCluster.replicaSet();
        EmulatedShardedCluster.Builder sharded = null;
        ServerVersion version = ServerVersion.V4_4;
        for (int i = 0; i < args.length; i++) {
            switch (args[i]) {
                case "--port":
                    builder.port(Integer.parseInt(args[++i]));
                    break;
                case "--version":
                    version = ServerVersion.parse(args[++i]);
                    builder.serverVersion(version);
                    break;
                case "--members":
                    builder.members(Integer.parseInt(args[++i]));
                    break;
                case "--shards":
                    sharded = sharded != null ? sharded : EmulatedCluster.sharded();
                    sharded.shards(Integer.parseInt(args[++i]));
                    break;
                case "--mongos":
                    sharded = sharded != null ? sharded : EmulatedCluster.sharded();
                    sharded.mongos(Integer.parseInt(args[++i]));
                    break;
                case "--help":
                case "-h":
                    System.out.println("usage: java -jar testkit.jar [--port N] [--version 4.2|4.4|5.0|6.0|7.0|8.0]"
                            + " [--members N] [--shards S [--mongos M]]");
                    return;
                default:
                    System.err.println("unknown option " + args[i] + "; try --help");
                    System.exit(2);
            }
        }
        EmulatedCluster cluster =
                sharded != null ? sharded.serverVersion(version).start() : builder.start();
        CountDownLatch stopped = new CountDownLatch(1);
        Runtime.getRuntime().addShutdownHook(new Thread(() -> {
            cluster.close();
            stopped.countDown();
        }));
        System.out.println(cluster.connectionString());
        System.out.flush();
        stopped.await();
    }
}
