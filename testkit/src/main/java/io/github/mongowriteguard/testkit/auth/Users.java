package io.github.mongowriteguard.testkit.auth;

import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;

/**
 * The users of an emulated deployment, for tests that must run as an application user (issue 15): created from
 * Java (there is no {@code createUser} command), authenticated over the wire with SCRAM-SHA-256 by the real
 * driver ({@code mongodb://app:secret@host/?authSource=admin}). Authorization is enabled on a node as soon as its
 * {@code Users} has one user; then a connection that has not authenticated may run only the handshake commands.
 *
 * <p>Roles grant only the cluster actions the testkit checks, as the server's built-in roles do:
 *
 * <table>
 * <caption>roles</caption>
 * <tr><th>role</th><th>actions checked by the testkit</th></tr>
 * <tr><td>{@code root}</td><td>all</td></tr>
 * <tr><td>{@code clusterMonitor}</td><td>{@code inprog}</td></tr>
 * <tr><td>{@code hostManager}</td><td>{@code killop}, {@code killAnySession}</td></tr>
 * <tr><td>{@code clusterAdmin}</td><td>{@code inprog}, {@code killop}, {@code killAnySession}</td></tr>
 * <tr><td>{@code readWrite}, {@code readWriteAnyDatabase}, {@code read}, {@code dbOwner}</td><td>none (reads and
 * writes are not checked)</td></tr>
 * </table>
 */
public final class Users {
    /** The action a role grants when it grants every action. */
    public static final String ALL_ACTIONS = "*";

    private static final Map<String, Set<String>> ROLES = Map.of(
            "root", Set.of(ALL_ACTIONS),
            "clusterMonitor", Set.of("inprog"),
            "hostManager", Set.of("killop", "killAnySession"),
            "clusterAdmin", Set.of("inprog", "killop", "killAnySession"),
            "readWrite", Set.of(),
            "readWriteAnyDatabase", Set.of(),
            "read", Set.of(),
            "dbOwner", Set.of());

    private final Map<String, StoredUser> users = new ConcurrentHashMap<>();

    /** One user: its principal and its SCRAM-SHA-256 credentials. */
    record StoredUser(Principal principal, ScramSha256.Credentials credentials) {}

    /**
     * Creates (or replaces) a user in {@code admin}.
     *
     * @param roles built-in role names (see the class comment)
     * @throws IllegalArgumentException for an unknown role or an empty name or password
     * @param user     the user name
     * @param password the user's password
     * @return this registry
     */
    public Users add(String user, String password, String... roles) {
        return add(user, "admin", password, List.of(roles));
    }

    /**
     * Creates (or replaces) a user in database {@code db}.
     *
     * @param user     the user name
     * @param db       the database the user is created in
     * @param password the user's password
     * @param roles    built-in role names (see the class comment)
     * @return this registry
     * @throws IllegalArgumentException for an unknown role or an empty name or password
     */
    public Users add(String user, String db, String password, List<String> roles) {
        if (user == null || user.isEmpty() || password == null || password.isEmpty()) {
            throw new IllegalArgumentException("a user needs a name and a password");
        }
        Set<String> actions = new LinkedHashSet<>();
        for (String role : roles) {
            Set<String> granted = ROLES.get(role);
            if (granted == null) {
                throw new IllegalArgumentException("unknown role " + role + "; the testkit knows " + ROLES.keySet());
            }
            actions.addAll(granted);
        }
        Principal principal = new Principal(user, db, actions);
        users.put(principal.fullName(), new StoredUser(principal, ScramSha256.Credentials.of(password)));
        return this;
    }

    /**
     * Whether authorization is enabled (at least one user exists).
     *
     * @return true once a user exists
     */
    public boolean enabled() {
        return !users.isEmpty();
    }

    StoredUser find(String user, String db) {
        return users.get(user + "@" + db);
    }
}
