package io.github.mongowriteguard.testkit.auth;

import java.util.HashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.ConcurrentHashMap;

/**
 * The users of an emulated deployment, for tests that must run as an application user: created from Java (there is no
 * {@code createUser} command), authenticated over the wire with SCRAM-SHA-256 by the real driver
 * ({@code mongodb://app:secret@host/?authSource=admin}). Authorization is enabled on a node as soon as its
 * {@code Users} has one user; then a connection that has not authenticated may run only the handshake commands, and
 * every command {@link CommandPrivileges} knows is refused ({@code Unauthorized}, 13) unless the user's roles grant
 * what it needs.
 *
 * <p>Roles are the server's built-in roles ({@link BuiltinRoles}): {@code read}, {@code readWrite}, {@code dbAdmin},
 * {@code dbOwner} on one database; {@code readAnyDatabase}, {@code readWriteAnyDatabase}, {@code dbAdminAnyDatabase},
 * {@code clusterMonitor}, {@code hostManager}, {@code clusterManager}, {@code clusterAdmin} and {@code root} (admin
 * only). As on the server, a role named alone is a role on the user's own database ({@code "readWrite"} for a user of
 * {@code admin} is {@code readWrite} on {@code admin} only); {@code "readWrite@shop"} names the database
 * ({@code {role: "readWrite", db: "shop"}}).
 */
public final class Users {
    /** The action a role grants when it grants every action. */
    public static final String ALL_ACTIONS = "*";

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
        Map<String, Set<String>> onDatabases = new HashMap<>();
        for (String named : roles) {
            int at = named.indexOf('@');
            String role = at < 0 ? named : named.substring(0, at);
            String roleDb = at < 0 ? db : named.substring(at + 1);
            BuiltinRoles.Role granted = BuiltinRoles.ROLES.get(role);
            if (granted == null) {
                throw new IllegalArgumentException(
                        "unknown role " + role + "; the testkit knows " + new TreeSet<>(BuiltinRoles.ROLES.keySet()));
            }
            if (granted.adminOnly() && !roleDb.equals("admin")) {
                throw new IllegalArgumentException(
                        "role " + role + " exists only on the admin database, not on " + roleDb);
            }
            actions.addAll(granted.onCluster());
            onDatabases.computeIfAbsent(roleDb, d -> new LinkedHashSet<>()).addAll(granted.onItsDatabase());
            onDatabases
                    .computeIfAbsent(Principal.ANY_DATABASE, d -> new LinkedHashSet<>())
                    .addAll(granted.onAnyDatabase());
        }
        Principal principal = new Principal(user, db, actions, onDatabases);
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
