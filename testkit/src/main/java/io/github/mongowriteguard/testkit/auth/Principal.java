package io.github.mongowriteguard.testkit.auth;

import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.HashMap;
import java.util.Map;
import java.util.Set;

/**
 * An authenticated user of an emulated node: its name, its database and the actions its roles grant.
 *
 * @param user    the user name
 * @param db      the database the user was created in ({@code admin} by default)
 * @param actions the privilege actions the user's roles grant on the cluster resource ({@code inprog},
 *                {@code killop}, {@code killAnySession}, ...); {@link Users#ALL_ACTIONS} for {@code root}
 */
public record Principal(String user, String db, Set<String> actions, Map<String, Set<String>> databaseActions) {
    /** The key of {@link #databaseActions()} for the actions granted on every normal database. */
    public static final String ANY_DATABASE = "*";

    /**
     * Copies {@code actions} and {@code databaseActions} into unmodifiable collections.
     *
     * @param user            the user name
     * @param db              the database the user was created in
     * @param actions         the privilege actions the user's roles grant on the cluster
     * @param databaseActions per database, the actions the user's roles grant on its collections ({@link
     *                        #ANY_DATABASE}: on every database but {@code local} and {@code config})
     */
    public Principal {
        actions = Set.copyOf(actions);
        Map<String, Set<String>> copy = new HashMap<>();
        databaseActions.forEach((database, granted) -> copy.put(database, Set.copyOf(granted)));
        databaseActions = Map.copyOf(copy);
    }

    /**
     * A user whose roles grant only cluster actions.
     *
     * @param user    the user name
     * @param db      the database the user was created in
     * @param actions the privilege actions the user's roles grant on the cluster
     */
    public Principal(String user, String db, Set<String> actions) {
        this(user, db, actions, Map.of());
    }

    /**
     * Whether the user's roles grant {@code action} on the collections of {@code database} (as
     * {@code isAuthorizedForActionsOnResource(ResourcePattern::forDatabaseName(...), action)}): by a role on that
     * database, or by an {@code *AnyDatabase} role ("any_normal": not {@code local} or {@code config}), or by
     * {@code root}.
     *
     * @param database the database
     * @param action   a privilege action such as {@code insert}
     * @return true when granted
     */
    public boolean mayOn(String database, String action) {
        if (actions.contains(Users.ALL_ACTIONS)) {
            return true;
        }
        Set<String> own = databaseActions.getOrDefault(database, Set.of());
        if (own.contains(action)) {
            return true;
        }
        boolean normal = !database.equals("local") && !database.equals("config");
        Set<String> any = databaseActions.getOrDefault(ANY_DATABASE, Set.of());
        return normal && (any.contains(action) || any.contains(Users.ALL_ACTIONS));
    }

    /**
     * Whether the user's roles grant {@code action} (as {@code isAuthorizedForActionsOnResource(cluster, action)}).
     *
     * @param action a privilege action on the cluster resource, e.g. {@code killop}
     * @return true when granted (always for {@code root})
     */
    public boolean has(String action) {
        return actions.contains(Users.ALL_ACTIONS) || actions.contains(action);
    }

    /**
     * {@code user@db}, the name the server reports and the identity ops are compared by ({@code $ownOps}).
     *
     * @return the full name
     */
    public String fullName() {
        return user + "@" + db;
    }

    /**
     * The {@code uid} of the logical sessions this user starts: SHA-256 of the user's full name (the server uses the
     * digest of the authenticated user, {@code getLogicalSessionUserDigestForLoggedInUser}); {@link #NO_USER_DIGEST}
     * when nobody is authenticated.
     *
     * @return the SHA-256 digest of {@link #fullName()}
     */
    public byte[] digest() {
        return sha256(fullName());
    }

    /** The session {@code uid} when no user is authenticated (authorization disabled): SHA-256 of "". */
    public static final byte[] NO_USER_DIGEST = sha256("");

    /**
     * The digest of {@code principal}, or {@link #NO_USER_DIGEST} for null.
     *
     * @param principal the authenticated user, or null
     * @return its digest, or a copy of {@link #NO_USER_DIGEST}
     */
    public static byte[] digestOf(Principal principal) {
        return principal == null ? NO_USER_DIGEST.clone() : principal.digest();
    }

    static byte[] sha256(String text) {
        try {
            return MessageDigest.getInstance("SHA-256").digest(text.getBytes(StandardCharsets.UTF_8));
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException(e);
        }
    }

    @Override
    public String toString() {
        return fullName();
    }
}
