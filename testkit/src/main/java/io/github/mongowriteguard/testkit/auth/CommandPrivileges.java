package io.github.mongowriteguard.testkit.auth;

import java.util.ArrayList;
import java.util.List;
import org.bson.BsonArray;
import org.bson.BsonDocument;
import org.bson.BsonValue;

/**
 * The privileges a command needs, as the server's {@code checkAuthForCommand} / {@code checkAuthForOperation} of each
 * command asks them: an action on the command's database (its collections) or on the cluster. Write commands: {@code
 * src/mongo/db/commands/write_commands.cpp} and {@code src/mongo/db/auth/authorization_checks.cpp}
 * ({@code checkAuthForInsert} also wants {@code bypassDocumentValidation} when the command asks for it,
 * {@code checkAuthForUpdate} wants {@code insert} for an upsert); {@code findAndModify}:
 * {@code src/mongo/db/commands/find_and_modify.cpp}; {@code create}: {@code checkAuthForCreate} ({@code
 * createCollection} or {@code insert}); {@code listCollections} with {@code authorizedCollections: true, nameOnly:
 * true} and {@code listDatabases} (which then lists the user's databases) need nothing.
 *
 * <p>Commands not listed here are not checked (beyond authentication): sharding and replication administration,
 * {@code configureFailPoint}, {@code getMore} (the server checks the cursor's owner), and the stages of an
 * {@code aggregate} after the first ({@code $out}, {@code $merge}, {@code $lookup} need more on the server).
 */
public final class CommandPrivileges {

    /** One privilege: an action on a database's collections ({@code database} non-null) or on the cluster. */
    public record Privilege(String database, String action) {
        /** The cluster resource's marker. */
        static final String CLUSTER = "";

        boolean cluster() {
            return database.equals(CLUSTER);
        }
    }

    private CommandPrivileges() {}

    /**
     * The privileges {@code command} needs, or null when the testkit does not check this command.
     *
     * @param database    the command's {@code $db}
     * @param commandName its name
     * @param command     its body
     * @return what it needs (an empty list: nothing), or null: unchecked
     */
    public static List<Privilege> required(String database, String commandName, BsonDocument command) {
        List<Privilege> needed = new ArrayList<>();
        switch (commandName) {
            case "insert" -> needed.add(on(database, "insert"));
            case "update" -> {
                needed.add(on(database, "update"));
                if (anyStatement(command.get("updates"), "upsert")) {
                    needed.add(on(database, "insert"));
                }
            }
            case "delete" -> needed.add(on(database, "remove"));
            case "findAndModify", "findandmodify" -> {
                needed.add(on(database, "find"));
                if (truthy(command.get("remove"))) {
                    needed.add(on(database, "remove"));
                } else {
                    needed.add(on(database, "update"));
                    if (truthy(command.get("upsert"))) {
                        needed.add(on(database, "insert"));
                    }
                }
            }
            case "find", "count", "distinct", "aggregate" -> needed.add(on(database, "find"));
            case "listIndexes" -> needed.add(on(database, "listIndexes"));
            case "listCollections" -> {
                if (!(truthy(command.get("authorizedCollections")) && truthy(command.get("nameOnly")))) {
                    needed.add(on(database, "listCollections"));
                }
            }
            case "create" -> needed.add(on(database, "createCollection")); // or insert: see allows
            case "drop" -> needed.add(on(database, "dropCollection"));
            case "dropDatabase" -> needed.add(on(database, "dropDatabase"));
            case "createIndexes" -> needed.add(on(database, "createIndex"));
            case "dropIndexes", "deleteIndexes" -> needed.add(on(database, "dropIndex"));
            case "collMod" -> needed.add(on(database, "collMod"));
            case "dbStats" -> needed.add(on(database, "dbStats"));
            case "collStats" -> needed.add(on(database, "collStats"));
            case "killCursors" -> needed.add(on(database, "killCursors"));
            case "serverStatus", "replSetGetStatus", "replSetGetConfig", "hostInfo", "getCmdLineOpts" ->
                needed.add(new Privilege(Privilege.CLUSTER, commandName));
            case "bulkWrite" -> bulkWrite(command, needed);
            default -> {
                return null;
            }
        }
        if (truthy(command.get("bypassDocumentValidation"))
                && List.of("insert", "update", "findAndModify", "findandmodify", "aggregate")
                        .contains(commandName)) {
            needed.add(on(database, "bypassDocumentValidation"));
        }
        return needed;
    }

    /**
     * Whether {@code principal} may run the command; true for commands the testkit does not check.
     *
     * @param principal   the authenticated user
     * @param database    the command's {@code $db}
     * @param commandName its name
     * @param command     its body
     * @return whether every privilege it needs is granted
     */
    public static boolean allows(Principal principal, String database, String commandName, BsonDocument command) {
        List<Privilege> needed = required(database, commandName, command);
        if (needed == null) {
            return true;
        }
        for (Privilege privilege : needed) {
            boolean granted = privilege.cluster()
                    ? principal.has(privilege.action())
                    : principal.mayOn(privilege.database(), privilege.action());
            if (!granted && commandName.equals("create") && privilege.action().equals("createCollection")) {
                granted = principal.mayOn(privilege.database(), "insert"); // checkAuthForCreate
            }
            if (!granted) {
                return false;
            }
        }
        return true;
    }

    /** {@code bulkWrite} (8.0, on admin): each namespace of {@code nsInfo} needs the actions of its operations. */
    private static void bulkWrite(BsonDocument command, List<Privilege> needed) {
        BsonValue nsInfo = command.get("nsInfo");
        BsonValue ops = command.get("ops");
        if (nsInfo == null || !nsInfo.isArray() || ops == null || !ops.isArray()) {
            return;
        }
        BsonArray namespaces = nsInfo.asArray();
        for (BsonValue op : ops.asArray()) {
            if (!op.isDocument()) {
                continue;
            }
            BsonDocument statement = op.asDocument();
            String kind = statement.getFirstKey();
            BsonValue index = statement.get(kind);
            if (!index.isNumber() || index.asNumber().intValue() >= namespaces.size()) {
                continue;
            }
            BsonValue ns =
                    namespaces.get(index.asNumber().intValue()).asDocument().get("ns");
            String database =
                    ns == null || !ns.isString() ? "" : ns.asString().getValue().split("\\.", 2)[0];
            switch (kind) {
                case "insert" -> needed.add(on(database, "insert"));
                case "update" -> {
                    needed.add(on(database, "update"));
                    if (truthy(statement.get("upsert"))) {
                        needed.add(on(database, "insert"));
                    }
                }
                case "delete" -> needed.add(on(database, "remove"));
                default -> {}
            }
        }
    }

    private static Privilege on(String database, String action) {
        return new Privilege(database, action);
    }

    private static boolean anyStatement(BsonValue statements, String flag) {
        if (statements == null || !statements.isArray()) {
            return false;
        }
        for (BsonValue statement : statements.asArray()) {
            if (statement.isDocument() && truthy(statement.asDocument().get(flag))) {
                return true;
            }
        }
        return false;
    }

    /**
     * A flag as the server reads it ({@code BSONElement::trueValue}): false for missing, null, false and 0.
     *
     * @param value the field's value, or null when absent
     * @return whether it is set
     */
    public static boolean truthy(BsonValue value) {
        if (value == null || value.isNull()) {
            return false;
        }
        if (value.isBoolean()) {
            return value.asBoolean().getValue();
        }
        if (value.isNumber()) {
            return value.asNumber().doubleValue() != 0;
        }
        return true;
    }
}
