package io.github.mongowriteguard.testkit.spec;

import java.util.ArrayList;
import java.util.List;
import org.bson.BsonArray;
import org.bson.BsonDocument;
import org.bson.BsonValue;

/**
 * The unified format's {@code runOnRequirements}: met when any one requirement is met; a requirement checks
 * {@code minServerVersion}, {@code maxServerVersion}, {@code topologies} and {@code serverless}. Any other
 * requirement ({@code auth}, {@code serverParameters}, {@code csfle}) is treated as not met.
 */
final class RunOnRequirements {
    private RunOnRequirements() {}

    /** Null when met, else why not. */
    static String unmet(BsonArray requirements, SpecTarget target) {
        if (requirements == null || requirements.isEmpty()) {
            return null;
        }
        List<String> reasons = new ArrayList<>();
        for (BsonValue value : requirements) {
            String reason = unmet(value.asDocument(), target);
            if (reason == null) {
                return null;
            }
            if (!reasons.contains(reason)) {
                reasons.add(reason);
            }
        }
        return "runOnRequirements not met: " + String.join("; ", reasons);
    }

    private static String unmet(BsonDocument requirement, SpecTarget target) {
        String version = target.serverVersion();
        for (String key : requirement.keySet()) {
            switch (key) {
                case "minServerVersion":
                    if (compare(version, requirement.getString(key).getValue()) < 0) {
                        return "server " + version + " < minServerVersion "
                                + requirement.getString(key).getValue();
                    }
                    break;
                case "maxServerVersion":
                    if (compare(version, requirement.getString(key).getValue()) > 0) {
                        return "server " + version + " > maxServerVersion "
                                + requirement.getString(key).getValue();
                    }
                    break;
                case "topologies":
                    boolean listed = requirement.getArray(key).stream()
                            .anyMatch(t -> t.asString().getValue().equals(target.topology())
                                    || (t.asString().getValue().equals("sharded-replicaset")
                                            && target.topology().equals("sharded")));
                    if (!listed) {
                        return "topology " + target.topology() + " not in "
                                + requirement.getArray(key).stream()
                                        .map(t -> t.asString().getValue())
                                        .toList();
                    }
                    break;
                case "serverless":
                    if (requirement.getString(key).getValue().equals("require")) {
                        return "needs serverless";
                    }
                    break;
                default:
                    return "requirement '" + key + "' is not supported by the runner";
            }
        }
        return null;
    }

    /** Compares dotted versions; missing parts count as 0 ({@code 4.4} equals {@code 4.4.0}). */
    static int compare(String left, String right) {
        String[] a = left.split("[.-]");
        String[] b = right.split("[.-]");
        for (int i = 0; i < Math.max(a.length, b.length); i++) {
            int x = i < a.length ? parse(a[i]) : 0;
            int y = i < b.length ? parse(b[i]) : 0;
            if (x != y) {
                return Integer.compare(x, y);
            }
        }
        return 0;
    }

    private static int parse(String part) {
        try {
            return Integer.parseInt(part);
        } catch (NumberFormatException e) {
            return 0;
        }
    }
}
