package io.github.mongowriteguard.testkit.node;

import io.github.mongowriteguard.testkit.auth.ScramSha256;
import io.github.mongowriteguard.testkit.wire.ClientConnection;
import java.util.List;
import java.util.Map;
import org.bson.BsonArray;
import org.bson.BsonBoolean;
import org.bson.BsonDateTime;
import org.bson.BsonDocument;
import org.bson.BsonDouble;
import org.bson.BsonInt32;
import org.bson.BsonInt64;
import org.bson.BsonObjectId;
import org.bson.BsonString;
import org.bson.types.ObjectId;

/**
 * A node's {@code hello} (and legacy {@code isMaster}): who it is, the set it belongs to, its wire versions and
 * limits, as mongodb/mongo {@code src/mongo/db/repl/replication_info.cpp} ({@code CmdHello}) answers it; a member of a
 * replicating set describes its current state ({@code replication_coordinator_impl.cpp}
 * {@code fillIsMasterForReplSet}). Holds what a reconfig sets: the hosts, the member tags and the primary a secondary
 * names.
 */
final class ReplicationInfo {
    private final EmulatedNode node;
    private final NodeIdentity identity;
    private final ObjectId electionId = new ObjectId();
    private volatile List<String> hosts;
    private volatile Map<String, String> tags = Map.of();
    private volatile String primaryAddress;

    ReplicationInfo(EmulatedNode node, NodeIdentity identity) {
        this.node = node;
        this.identity = identity;
    }

    void hosts(List<String> members) {
        this.hosts = List.copyOf(members);
    }

    void tags(Map<String, String> memberTags) {
        this.tags = Map.copyOf(memberTags);
    }

    Map<String, String> tags() {
        return tags;
    }

    void primaryAddress(String address) {
        this.primaryAddress = address;
    }

    BsonDocument hello(ClientConnection connection, BsonDocument command) {
        if (command.containsKey("client")) {
            BsonDocument client = command.getDocument("client");
            if (client.containsKey("application")) {
                connection.appName(
                        client.getDocument("application").getString("name").getValue());
            }
        }
        boolean legacy = !command.getFirstKey().equals("hello");
        BsonDocument reply = new BsonDocument();
        if (command.getBoolean("helloOk", BsonBoolean.FALSE).getValue()) {
            reply.append("helloOk", BsonBoolean.TRUE);
        }
        Membership member = node.membership();
        if (member != null) {
            describeMember(member, legacy, reply);
        }
        boolean secondary = identity.kind() == NodeIdentity.Kind.REPLICA_SET_SECONDARY;
        if (member == null) {
            reply.append(legacy ? "ismaster" : "isWritablePrimary", BsonBoolean.valueOf(!secondary));
        }
        switch (member != null ? NodeIdentity.Kind.STANDALONE : identity.kind()) {
            case REPLICA_SET_PRIMARY:
            case REPLICA_SET_SECONDARY:
                BsonArray members = new BsonArray();
                hosts.forEach(host -> members.add(new BsonString(host)));
                reply.append("hosts", members)
                        .append("setName", new BsonString(identity.setName()))
                        .append("setVersion", new BsonInt32(1))
                        .append("secondary", BsonBoolean.valueOf(secondary));
                String primary = secondary ? primaryAddress : node.address();
                if (primary != null) {
                    reply.append("primary", new BsonString(primary));
                }
                reply.append("me", new BsonString(node.address()));
                if (!tags.isEmpty()) {
                    BsonDocument tagDocument = new BsonDocument();
                    tags.forEach((k, v) -> tagDocument.append(k, new BsonString(v)));
                    reply.append("tags", tagDocument);
                }
                if (!secondary) {
                    reply.append("electionId", new BsonObjectId(electionId));
                }
                break;
            case MONGOS:
                reply.append("msg", new BsonString("isdbgrid"));
                break;
            default:
                break;
        }
        if (command.isString("saslSupportedMechs") && node.users().enabled()) {
            // The mechanisms of the named user ("db.user"); the emulator stores SCRAM-SHA-256 credentials only.
            reply.append("saslSupportedMechs", new BsonArray(List.of(new BsonString(ScramSha256.MECHANISM))));
        }
        reply.append("maxBsonObjectSize", new BsonInt32(16 * 1024 * 1024))
                .append("maxMessageSizeBytes", new BsonInt32(48_000_000))
                .append("maxWriteBatchSize", new BsonInt32(100_000))
                .append("localTime", new BsonDateTime(System.currentTimeMillis()))
                .append("logicalSessionTimeoutMinutes", new BsonInt32(30))
                .append("connectionId", new BsonInt64(connection.id()))
                .append("minWireVersion", new BsonInt32(0))
                .append("maxWireVersion", new BsonInt32(identity.version().wireVersion()))
                .append("readOnly", BsonBoolean.FALSE)
                .append("ok", new BsonDouble(1));
        return reply;
    }

    /**
     * {@code hello} of a member of a replicating set: its current state, the primary it knows, and the primary's
     * {@code electionId}, which grows with the term ({@code OID::fromTerm}), so the driver takes the newest primary.
     */
    private void describeMember(Membership member, boolean legacy, BsonDocument reply) {
        boolean primary = member.isWritablePrimary();
        reply.append(legacy ? "ismaster" : "isWritablePrimary", BsonBoolean.valueOf(primary));
        BsonArray members = new BsonArray();
        member.hosts().forEach(host -> members.add(new BsonString(host)));
        reply.append("hosts", members)
                .append("setName", new BsonString(identity.setName()))
                .append("setVersion", new BsonInt32(1))
                .append("secondary", BsonBoolean.valueOf(member.isSecondary()));
        String primaryAddress = member.primaryAddress();
        if (primaryAddress != null) {
            reply.append("primary", new BsonString(primaryAddress));
        }
        reply.append("me", new BsonString(node.address()));
        if (!tags.isEmpty()) {
            BsonDocument tagDocument = new BsonDocument();
            tags.forEach((k, v) -> tagDocument.append(k, new BsonString(v)));
            reply.append("tags", tagDocument);
        }
        ObjectId memberElectionId = member.electionId();
        if (primary && memberElectionId != null) {
            reply.append("electionId", new BsonObjectId(memberElectionId));
        }
    }
}
