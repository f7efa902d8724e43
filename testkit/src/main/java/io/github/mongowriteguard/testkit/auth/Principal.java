package io.github.mongowriteguard.testkit.auth;

import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.Set;

/**
 * An authenticated user of an emulated node: its name, its database and the actions its roles grant.
 *
 * @param user    the user name
 * @param db      the database the user was created in ({@code admin} by default)
 * @param actions the privilege actions the user's roles grant on the cluster resource ({@code inprog},
 *                {@code killop}, {@code killAnySession}, ...); {@link Users#ALL_ACTIONS} for {@code root}
 */
public record Principal(String user, String db, Set<String> actions) {
    /**
     * Copies {@code actions} into an unmodifiable set.
     *
     * @param user    the user name
     * @param db      the database the user was created in
     * @param actions the privilege actions the user's roles grant
     */
    public Principal {
        actions = Set.copyOf(actions);
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
