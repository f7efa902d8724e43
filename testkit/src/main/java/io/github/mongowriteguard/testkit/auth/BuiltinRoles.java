package io.github.mongowriteguard.testkit.auth;

import java.util.LinkedHashSet;
import java.util.Map;
import java.util.Set;

/**
 * The server's built-in roles, as the privileges the testkit checks: actions on the normal collections of one database
 * (the role's), of any database ({@code *AnyDatabase}, "any_normal": every database but {@code local} and
 * {@code config}), and on the cluster. The action lists are the server's ({@code src/mongo/db/auth/builtin_roles.yml};
 * the action names of {@code src/mongo/db/auth/action_type.idl}), cut to the actions some command the testkit checks
 * needs ({@link CommandPrivileges}); roles over system collections ({@code system.js}, {@code system.profile}) and
 * the {@code local}/{@code config} grants of {@code clusterMonitor} and {@code clusterManager} are left out.
 */
public final class BuiltinRoles {

    /** One role: its actions on its own database, on any normal database, and on the cluster. */
    record Role(Set<String> onItsDatabase, Set<String> onAnyDatabase, Set<String> onCluster, boolean adminOnly) {}

    static final Set<String> READ = Set.of(
            "changeStream",
            "collStats",
            "dbHash",
            "dbStats",
            "find",
            "killCursors",
            "listCollections",
            "listIndexes",
            "listSearchIndexes",
            "planCacheRead");

    static final Set<String> READ_WRITE = union(
            READ,
            Set.of(
                    "convertToCapped",
                    "createCollection",
                    "createIndex",
                    "createSearchIndexes",
                    "dropCollection",
                    "dropIndex",
                    "dropSearchIndex",
                    "insert",
                    "remove",
                    "renameCollectionSameDB",
                    "update",
                    "updateSearchIndex"));

    static final Set<String> DB_ADMIN = Set.of(
            "analyze",
            "bypassDocumentValidation",
            "collMod",
            "collStats",
            "compact",
            "convertToCapped",
            "createCollection",
            "dbStats",
            "dropCollection",
            "dropDatabase",
            "dropIndex",
            "dropSearchIndex",
            "createIndex",
            "createSearchIndexes",
            "enableProfiler",
            "listCollections",
            "listIndexes",
            "listSearchIndexes",
            "updateSearchIndex",
            "planCacheIndexFilter",
            "planCacheRead",
            "planCacheWrite",
            "reIndex",
            "renameCollectionSameDB",
            "storageDetails",
            "validate");

    static final Set<String> CLUSTER_MONITOR = Set.of(
            "connPoolStats",
            "getCmdLineOpts",
            "getDefaultRWConcern",
            "getLog",
            "getParameter",
            "getShardMap",
            "hostInfo",
            "listDatabases",
            "listSessions",
            "listShards",
            "netstat",
            "replSetGetConfig",
            "replSetGetStatus",
            "serverStatus",
            "top",
            "inprog",
            "shardingState");

    static final Set<String> HOST_MANAGER = Set.of(
            "dropConnections",
            "flushRouterConfig",
            "fsync",
            "killAnyCursor",
            "killAnySession",
            "killop",
            "setParameter");

    static final Set<String> CLUSTER_MANAGER = Set.of(
            "replSetConfigure",
            "replSetGetConfig",
            "replSetGetStatus",
            "replSetStateChange",
            "addShard",
            "removeShard",
            "listSessions",
            "listShards",
            "flushRouterConfig",
            "getDefaultRWConcern",
            "setDefaultRWConcern",
            "setFeatureCompatibilityVersion");

    private static final Set<String> NONE = Set.of();

    static final Map<String, Role> ROLES = Map.ofEntries(
            Map.entry("read", new Role(READ, NONE, NONE, false)),
            Map.entry("readWrite", new Role(READ_WRITE, NONE, NONE, false)),
            Map.entry("dbAdmin", new Role(DB_ADMIN, NONE, NONE, false)),
            Map.entry("dbOwner", new Role(union(READ_WRITE, DB_ADMIN), NONE, NONE, false)),
            Map.entry("readAnyDatabase", new Role(NONE, READ, Set.of("listDatabases"), true)),
            Map.entry("readWriteAnyDatabase", new Role(NONE, READ_WRITE, Set.of("listDatabases"), true)),
            Map.entry("dbAdminAnyDatabase", new Role(NONE, DB_ADMIN, Set.of("listDatabases"), true)),
            Map.entry(
                    "clusterMonitor",
                    new Role(NONE, Set.of("collStats", "dbStats", "indexStats"), CLUSTER_MONITOR, true)),
            Map.entry("hostManager", new Role(NONE, Set.of("killCursors"), HOST_MANAGER, true)),
            Map.entry("clusterManager", new Role(NONE, NONE, CLUSTER_MANAGER, true)),
            Map.entry(
                    "clusterAdmin",
                    new Role(
                            NONE,
                            Set.of("collStats", "dbStats", "indexStats", "killCursors", "dropDatabase"),
                            union(union(CLUSTER_MONITOR, HOST_MANAGER), CLUSTER_MANAGER),
                            true)),
            Map.entry("root", new Role(NONE, Set.of(Users.ALL_ACTIONS), Set.of(Users.ALL_ACTIONS), true)));

    private BuiltinRoles() {}

    private static Set<String> union(Set<String> a, Set<String> b) {
        Set<String> all = new LinkedHashSet<>(a);
        all.addAll(b);
        return Set.copyOf(all);
    }
}
