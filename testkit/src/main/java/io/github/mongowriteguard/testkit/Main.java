package io.github.mongowriteguard.testkit;

import java.util.concurrent.CountDownLatch;

/**
 * {@code java -jar testkit/target/testkit.jar [--port N] [--version 4.4]}: starts an emulated replica set,
 * prints its connection string and serves until stopped (Ctrl-C).
 */
public final class Main {
    private Main() {
    }

    public static void main(String[] args) throws InterruptedException {
        EmulatedReplicaSet.Builder builder = EmulatedCluster.replicaSet();
        for (int i = 0; i < args.length; i++) {
            switch (args[i]) {
                case "--port":
                    builder.port(Integer.parseInt(args[++i]));
                    break;
                case "--version":
                    builder.serverVersion(ServerVersion.parse(args[++i]));
                    break;
                case "--help":
                case "-h":
                    System.out.println("usage: java -jar testkit.jar [--port N] [--version 4.2|4.4|5.0|6.0|7.0|8.0]");
                    return;
                default:
                    System.err.println("unknown option " + args[i] + "; try --help");
                    System.exit(2);
            }
        }
        EmulatedReplicaSet cluster = builder.start();
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
