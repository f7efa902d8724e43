package io.github.mongowriteguard.testkit.server;

/**
 * The MongoDB server version an emulated node reports, with the wire version the driver reads from
 * {@code hello}. Behaviours that changed between versions follow the reported version: from 4.4 the server
 * attaches {@code RetryableWriteError} labels itself and accepts {@code comment} on write commands.
 */
public enum ServerVersion {
    /**
     * MongoDB 4.2 (wire version 8): no server-side {@code RetryableWriteError} labels, no {@code comment} on writes.
     */
    V4_2(4, 2, 8),
    /** MongoDB 4.4 (wire version 9), the default. */
    V4_4(4, 4, 9),
    /** MongoDB 5.0 (wire version 13). */
    V5_0(5, 0, 13),
    /** MongoDB 6.0 (wire version 17). */
    V6_0(6, 0, 17),
    /** MongoDB 7.0 (wire version 21). */
    V7_0(7, 0, 21),
    /** MongoDB 8.0 (wire version 25). */
    V8_0(8, 0, 25);

    private final int major;
    private final int minor;
    private final int wireVersion;

    ServerVersion(int major, int minor, int wireVersion) {
        this.major = major;
        this.minor = minor;
        this.wireVersion = wireVersion;
    }

    /** {@return the {@code maxWireVersion} a node of this version reports in {@code hello}} */
    public int wireVersion() {
        return wireVersion;
    }

    /**
     * For example {@code "4.4.0"}.
     *
     * @return the version as {@code buildInfo} reports it
     */
    public String versionString() {
        return major + "." + minor + ".0";
    }

    /** {@return the major version, e.g. 4} */
    public int major() {
        return major;
    }

    /** {@return the minor version, e.g. 4} */
    public int minor() {
        return minor;
    }

    /**
     * True when this version is {@code other} or newer.
     *
     * @param other the version to compare with
     * @return whether this version is {@code other} or newer
     */
    public boolean atLeast(ServerVersion other) {
        return compareTo(other) >= 0;
    }

    /**
     * Parses {@code "4.4"} or {@code "4.4.0"}.
     *
     * @param text a version such as {@code 4.4}
     * @return the version
     * @throws IllegalArgumentException for a version the emulator does not know
     */
    public static ServerVersion parse(String text) {
        for (ServerVersion version : values()) {
            String shortForm = version.major + "." + version.minor;
            if (text.equals(shortForm) || text.startsWith(shortForm + ".")) {
                return version;
            }
        }
        throw new IllegalArgumentException(
                "serverVersion '" + text + "' is not emulated; use one of 4.2, 4.4, 5.0, 6.0, 7.0, 8.0");
    }
}
