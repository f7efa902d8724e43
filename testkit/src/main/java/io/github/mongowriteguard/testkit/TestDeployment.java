package io.github.mongowriteguard.testkit;

import java.util.Optional;

/**
 * The deployment a test runs against: a real one when the system property {@code mongo.uri} is set (e.g.
 * {@code mvn verify -Dmongo.uri=mongodb://host:27017/?replicaSet=rs0}), otherwise a freshly started emulated
 * replica set. Tests assert the driver-visible behaviour everywhere and the emulator-only truth (stalls,
 * copies, counters) only where {@link #emulated()} is present.
 */
public final class TestDeployment implements AutoCloseable {
    /** The system property naming a real deployment. */
    public static final String URI_PROPERTY = "mongo.uri";

    private final String connectionString;
    private final EmulatedReplicaSet emulated;

    private TestDeployment(String connectionString, EmulatedReplicaSet emulated) {
        this.connectionString = connectionString;
        this.emulated = emulated;
    }

    /**
     * A real deployment if {@code -Dmongo.uri} is given, else an emulated replica set.
     *
     * @return the deployment; close it after the test
     */
    public static TestDeployment replicaSet() {
        String uri = System.getProperty(URI_PROPERTY, "").trim();
        if (!uri.isEmpty()) {
            return new TestDeployment(uri, null);
        }
        EmulatedReplicaSet cluster = EmulatedCluster.replicaSet().start();
        return new TestDeployment(cluster.connectionString(), cluster);
    }

    /** {@return the connection string of the deployment (the real one as given)} */
    public String connectionString() {
        return connectionString;
    }

    /**
     * The emulator, when the test runs on one.
     *
     * @return the emulated replica set, or empty on a real deployment
     */
    public Optional<EmulatedReplicaSet> emulated() {
        return Optional.ofNullable(emulated);
    }

    /** {@return whether the test runs on the emulator, so emulator-only truth can be asserted} */
    public boolean isEmulated() {
        return emulated != null;
    }

    @Override
    public void close() {
        if (emulated != null) {
            emulated.close();
        }
    }

    @Override
    public String toString() {
        return isEmulated() ? emulated.toString() : "real deployment (" + URI_PROPERTY + ")";
    }
}
