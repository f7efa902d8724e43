package io.github.mongowriteguard.realmongodb;

import java.time.Duration;
import java.util.List;

import org.bson.Document;
import org.testcontainers.containers.GenericContainer;
import org.testcontainers.containers.wait.strategy.Wait;

import com.mongodb.client.MongoClient;
import com.mongodb.client.MongoClients;

/**
 * A real MongoDB deployment in one container of the official {@code mongo:<version>} image, started with
 * {@code enableTestCommands=1} so the fail-point tests run:
 * <ul>
 *   <li>replica set: one {@code mongod --replSet rs0}, initiated with the member {@code localhost:27017}; clients
 *       connect directly ({@code directConnection=true}) to the mapped port;</li>
 *   <li>sharded cluster: a config server replica set ({@code cfg}, port 27019) and one shard replica set
 *       ({@code sh0}, port 27018) in the background, {@code mongos} (port 27017) in front; clients connect to mongos.</li>
 * </ul>
 * Members name each other {@code localhost}, which holds inside the container; only mongos' or the primary's port is
 * used from outside.
 */
final class RealDeployment implements AutoCloseable {
    enum Topology { REPLICA_SET, SHARDED }

    private static final String TEST_COMMANDS = "--setParameter enableTestCommands=1 --bind_ip_all";

    private final GenericContainer<?> container;
    private final String uri;

    private RealDeployment(GenericContainer<?> container, String uri) {
        this.container = container;
        this.uri = uri;
    }

    static RealDeployment start(String version, Topology topology, Duration startup) {
        return topology == Topology.REPLICA_SET ? replicaSet(version, startup) : sharded(version, startup);
    }

    String uri() {
        return uri;
    }

    private static RealDeployment replicaSet(String version, Duration startup) {
        GenericContainer<?> container = new GenericContainer<>("mongo:" + version)
            .withCommand("bash", "-c", "exec mongod --replSet rs0 --port 27017 " + TEST_COMMANDS)
            .withExposedPorts(27017)
            .waitingFor(Wait.forListeningPort().withStartupTimeout(startup));
        container.start();
        String direct = "mongodb://" + container.getHost() + ":" + container.getMappedPort(27017) + "/?directConnection=true";
        initiate(direct, new Document("_id", "rs0").append("members",
            List.of(new Document("_id", 0).append("host", "localhost:27017"))), startup);
        return new RealDeployment(container, direct);
    }

    private static RealDeployment sharded(String version, Duration startup) {
        String script = "mkdir -p /data/cfg /data/sh0"
            + " && mongod --configsvr --replSet cfg --port 27019 --dbpath /data/cfg --fork --logpath /tmp/cfg.log " + TEST_COMMANDS
            + " && mongod --shardsvr --replSet sh0 --port 27018 --dbpath /data/sh0 --fork --logpath /tmp/sh0.log " + TEST_COMMANDS
            + " && exec mongos --configdb cfg/localhost:27019 --port 27017 " + TEST_COMMANDS;
        GenericContainer<?> container = new GenericContainer<>("mongo:" + version)
            .withCommand("bash", "-c", script)
            .withExposedPorts(27017, 27018, 27019)
            .waitingFor(Wait.forListeningPorts(27018, 27019).withStartupTimeout(startup));
        container.start();
        String host = container.getHost();
        initiate("mongodb://" + host + ":" + container.getMappedPort(27019) + "/?directConnection=true",
            new Document("_id", "cfg").append("configsvr", true)
                .append("members", List.of(new Document("_id", 0).append("host", "localhost:27019"))), startup);
        initiate("mongodb://" + host + ":" + container.getMappedPort(27018) + "/?directConnection=true",
            new Document("_id", "sh0").append("members", List.of(new Document("_id", 0).append("host", "localhost:27018"))), startup);
        String mongos = "mongodb://" + host + ":" + container.getMappedPort(27017) + "/";
        try (MongoClient client = MongoClients.create(mongos)) {
            retry(startup, () -> client.getDatabase("admin").runCommand(new Document("addShard", "sh0/localhost:27018")));
        }
        return new RealDeployment(container, mongos);
    }

    /** replSetInitiate, then waits until the member is a writable primary. */
    private static void initiate(String direct, Document config, Duration startup) {
        try (MongoClient client = MongoClients.create(direct)) {
            retry(startup, () -> client.getDatabase("admin").runCommand(new Document("replSetInitiate", config)));
            retry(startup, () -> {
                Document hello = client.getDatabase("admin").runCommand(new Document("hello", 1));
                if (!hello.getBoolean("isWritablePrimary", false)) {
                    throw new IllegalStateException("not primary yet: " + hello.toJson());
                }
                return hello;
            });
        }
    }

    private static <T> T retry(Duration limit, java.util.concurrent.Callable<T> action) {
        long deadline = System.nanoTime() + limit.toNanos();
        while (true) {
            try {
                return action.call();
            } catch (Exception e) {
                if (e.getMessage() != null && e.getMessage().contains("already initialized")) {
                    return null;
                }
                if (System.nanoTime() > deadline) {
                    throw new IllegalStateException("the deployment did not start in " + limit, e);
                }
                try {
                    Thread.sleep(250);
                } catch (InterruptedException interrupted) {
                    Thread.currentThread().interrupt();
                    throw new IllegalStateException(interrupted);
                }
            }
        }
    }

    @Override
    public void close() {
        container.stop();
    }
}
