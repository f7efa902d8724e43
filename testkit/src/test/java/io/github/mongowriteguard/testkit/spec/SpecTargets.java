package io.github.mongowriteguard.testkit.spec;

import com.mongodb.ConnectionString;
import com.mongodb.MongoClientSettings;
import com.mongodb.client.MongoClient;
import com.mongodb.client.MongoClients;
import io.github.mongowriteguard.testkit.EmulatedCluster;
import io.github.mongowriteguard.testkit.TestDeployment;
import io.github.mongowriteguard.testkit.server.ServerVersion;
import java.time.Duration;
import java.util.concurrent.TimeUnit;
import java.util.function.Supplier;
import org.bson.BsonDocument;
import org.bson.BsonInt32;

/**
 * The targets of {@link UnifiedSpecTest}. A real deployment replaces every emulated target when
 * {@code -Dmongo.uri} is set. Adding a target (the emulated sharded cluster) is one more
 * {@link #emulated(String, String, ServerVersion, Supplier)} call in {@link UnifiedSpecTest}.
 */
final class SpecTargets {
    private SpecTargets() {}

    /** The real deployment named by {@code -Dmongo.uri}, or null when the property is empty. */
    static SpecTarget realOrNull(String name) {
        String uri = System.getProperty(TestDeployment.URI_PROPERTY, "").trim();
        return uri.isEmpty() ? null : new Real(name, uri);
    }

    /** An emulated cluster, started when the first test of the target runs. */
    static SpecTarget emulated(
            String name, String topology, ServerVersion version, Supplier<? extends EmulatedCluster> start) {
        return new Emulated(name, topology, version, start);
    }

    private static final class Emulated implements SpecTarget {
        private final String name;
        private final String topology;
        private final ServerVersion version;
        private final Supplier<? extends EmulatedCluster> start;
        private EmulatedCluster cluster;

        Emulated(String name, String topology, ServerVersion version, Supplier<? extends EmulatedCluster> start) {
            this.name = name;
            this.topology = topology;
            this.version = version;
            this.start = start;
        }

        private synchronized EmulatedCluster cluster() {
            if (cluster == null) {
                cluster = start.get();
            }
            return cluster;
        }

        @Override
        public String name() {
            return name;
        }

        @Override
        public String topology() {
            return topology;
        }

        @Override
        public String serverVersion() {
            return version.versionString();
        }

        @Override
        public String connectionString(boolean multipleMongoses) {
            EmulatedCluster started = cluster();
            if (!multipleMongoses && started instanceof io.github.mongowriteguard.testkit.EmulatedShardedCluster) {
                // useMultipleMongoses: false means one mongos, so fail points set through it hit its operations.
                return "mongodb://"
                        + ((io.github.mongowriteguard.testkit.EmulatedShardedCluster) started)
                                .mongos(0)
                                .address() + "/";
            }
            return started.connectionString();
        }

        @Override
        public void awaitQuiet() {
            try {
                cluster().truth().awaitIdle(command -> true, Duration.ofSeconds(10));
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }

        @Override
        public boolean emulated() {
            return true;
        }

        @Override
        public synchronized void close() {
            if (cluster != null) {
                cluster.close();
                cluster = null;
            }
        }
    }

    private static final class Real implements SpecTarget {
        private final String name;
        private final String uri;
        private String topology;
        private String version;

        Real(String name, String uri) {
            this.name = name;
            this.uri = uri;
        }

        private synchronized void discover() {
            if (topology != null) {
                return;
            }
            MongoClientSettings settings = MongoClientSettings.builder()
                    .applyConnectionString(new ConnectionString(uri))
                    .applyToClusterSettings(c -> c.serverSelectionTimeout(10, TimeUnit.SECONDS))
                    .build();
            try (MongoClient client = MongoClients.create(settings)) {
                BsonDocument admin = new BsonDocument("hello", new BsonInt32(1));
                BsonDocument hello = client.getDatabase("admin").runCommand(admin, BsonDocument.class);
                BsonDocument build = client.getDatabase("admin")
                        .runCommand(new BsonDocument("buildInfo", new BsonInt32(1)), BsonDocument.class);
                version = build.getString("version").getValue();
                if (hello.containsKey("setName")) {
                    topology = "replicaset";
                } else if (hello.containsKey("msg")
                        && "isdbgrid".equals(hello.getString("msg").getValue())) {
                    topology = "sharded";
                } else if (hello.containsKey("serviceId")) {
                    topology = "load-balanced";
                } else {
                    topology = "single";
                }
            }
        }

        @Override
        public String name() {
            return name;
        }

        @Override
        public String topology() {
            discover();
            return topology;
        }

        @Override
        public String serverVersion() {
            discover();
            return version;
        }

        @Override
        public String connectionString(boolean multipleMongoses) {
            return uri;
        }

        @Override
        public void awaitQuiet() {
            // A real server's blocked commands end on their own; nothing to observe from here.
        }

        @Override
        public boolean emulated() {
            return false;
        }

        @Override
        public void close() {}
    }
}
