package io.github.mongowriteguard.testkit.failpoint;

import org.bson.BsonValue;

/**
 * A fail point's {@code mode} as mongod's {@code FailPoint}: {@code "off"}, {@code "alwaysOn"},
 * {@code {times: n}} (the next n evaluations fire) and {@code {skip: n}} (every evaluation after the first n
 * fires). Not thread-safe; the owning fail point synchronizes.
 */
final class FailPointMode {
    private enum Kind {
        OFF,
        ALWAYS_ON,
        TIMES,
        SKIP
    }

    static final FailPointMode OFF = new FailPointMode(Kind.OFF, 0);

    private Kind kind;
    private long count;

    private FailPointMode(Kind kind, long count) {
        this.kind = kind;
        this.count = count;
    }

    /** @throws IllegalArgumentException when the mode is not understood */
    static FailPointMode parse(BsonValue mode) {
        if (mode == null) {
            throw new IllegalArgumentException("configureFailPoint needs a 'mode'");
        }
        if (mode.isString()) {
            switch (mode.asString().getValue()) {
                case "off":
                    return new FailPointMode(Kind.OFF, 0);
                case "alwaysOn":
                    return new FailPointMode(Kind.ALWAYS_ON, 0);
                default:
                    throw new IllegalArgumentException("unknown fail point mode " + mode);
            }
        }
        if (mode.isDocument() && mode.asDocument().containsKey("times")) {
            long times = mode.asDocument().get("times").asNumber().longValue();
            return new FailPointMode(times > 0 ? Kind.TIMES : Kind.OFF, times);
        }
        if (mode.isDocument() && mode.asDocument().containsKey("skip")) {
            return new FailPointMode(
                    Kind.SKIP, mode.asDocument().get("skip").asNumber().longValue());
        }
        throw new IllegalArgumentException("unknown fail point mode " + mode);
    }

    boolean isOff() {
        return kind == Kind.OFF;
    }

    /** One evaluation of the (already matching) fail point: true if it fires. */
    boolean fire() {
        switch (kind) {
            case OFF:
                return false;
            case SKIP:
                if (count > 0) {
                    count--;
                    return false;
                }
                return true;
            case TIMES:
                if (--count <= 0) {
                    kind = Kind.OFF;
                }
                return true;
            default:
                return true;
        }
    }
}
