package io.github.mongowriteguard.testkit.spec;

/**
 * A deployment the unified spec tests run against, with what {@code runOnRequirements} needs to know about it.
 * An emulated cluster or a real deployment ({@code -Dmongo.uri}); see {@link SpecTargets}.
 */
interface SpecTarget extends AutoCloseable {

    /** The name used in the summary line, e.g. {@code replicaset} in {@code spec replicaset: ...}. */
    String name();

    /** The {@code runOnRequirements} topology: {@code single}, {@code replicaset}, {@code sharded}, ... */
    String topology();

    /** The server version, e.g. {@code 4.4.0}. */
    String serverVersion();

    /** A connection string for a test client; {@code multipleMongoses} as the client entity's {@code useMultipleMongoses}. */
    String connectionString(boolean multipleMongoses);

    /** After a test: waits until commands a test left running on the server (blocked by fail points) have ended. */
    void awaitQuiet();

    /** True for the testkit's emulated clusters, false for a real deployment. */
    boolean emulated();

    @Override
    void close();
}
