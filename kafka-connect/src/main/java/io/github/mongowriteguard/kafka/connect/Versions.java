package io.github.mongowriteguard.kafka.connect;

/** The version Connect shows for the guarded sink: the jar's, from its manifest. */
final class Versions {
    private Versions() {}

    static String version() {
        String version = Versions.class.getPackage().getImplementationVersion();
        return version != null ? version : "unknown";
    }
}
