package io.github.mongowriteguard.testkit;

/**
 * The MongoDB server version an emulated node reports, with the wire version the driver reads from
 * {@code hello}. Behaviours that changed between versions follow the reported version: from 4.4 the server
 * attaches {@code RetryableWriteError} labels itself and accepts {@code comment} on write commands.
 */
public enum ServerVersion {
    V4_2(4, 2, 8),
    V4_4(4, 4, 9),
    V5_0(5, 0, 13),
    V6_0(6, 0, 17),
    V7_0(7, 0, 21),
    V8_0(8, 0, 25);

    private final int major;
    private final int minor;
    private final int wireVersion;

    ServerVersion(int major, int minor, int wireVersion) {
        this.major = major;
        this.minor = minor;
        this.wireVersion = wireVersion;
    }

    public int wireVersion() {
        return wireVersion;
    }

    /** For example {@code "4.4.0"}. */
    public String versionString() {
        return major + "." + minor + ".0";
    }

    public int major() {
        return major;
    }

    public int minor() {
        return minor;
    }

    /** True when this version is {@code other} or newer. */
    public boolean atLeast(ServerVersion other) {
        return compareTo(other) >= 0;
    }

    /** Parses {@code "4.4"} or {@code "4.4.0"}. */
    public static ServerVersion parse(String text) {
        for (ServerVersion version : values()) {
            String shortForm = version.major + "." + version.minor;
            if (text.equals(shortForm) || text.startsWith(shortForm + ".")) {
                return version;
            }
        }
        throw new IllegalArgumentException("serverVersion '" + text + "' is not emulated; use one of 4.2, 4.4, 5.0, 6.0, 7.0, 8.0");
    }
}
