package io.github.mongowriteguard.testkit.node;

import io.github.mongowriteguard.testkit.auth.ScramSha256;
import io.github.mongowriteguard.testkit.engine.StorageEngine;
import io.github.mongowriteguard.testkit.wire.ClientConnection;
import org.bson.BsonBoolean;
import org.bson.BsonDocument;
import org.bson.BsonInt32;
import org.bson.BsonString;

/**
 * Authentication: {@code saslStart} and {@code saslContinue} with SCRAM-SHA-256, the one mechanism the emulator
 * offers, as mongodb/mongo {@code src/mongo/db/auth/sasl_commands.cpp} runs them (the conversation kept per
 * connection, mongod's {@code AuthenticationSession}, {@code src/mongo/db/auth/authentication_session.cpp}); a
 * finished conversation sets the connection's user.
 */
final class SaslCommands {
    private final EmulatedNode node;

    SaslCommands(EmulatedNode node) {
        this.node = node;
    }

    /** A connection's SASL conversation between {@code saslStart} and its last {@code saslContinue}. */
    private record SaslState(ScramSha256.Conversation conversation, boolean skipEmptyExchange) {}

    /** {@code saslStart} / {@code saslContinue} with SCRAM-SHA-256, the one mechanism offered. */
    BsonDocument sasl(ClientConnection connection, String database, BsonDocument command) {
        try {
            BsonDocument reply;
            if (command.getFirstKey().equals("saslStart")) {
                String mechanism =
                        command.getString("mechanism", new BsonString("")).getValue();
                if (!mechanism.equals(ScramSha256.MECHANISM)) {
                    return StorageEngine.error(
                            334,
                            "MechanismUnavailable",
                            "Received authentication for mechanism " + mechanism + " which is not enabled");
                }
                ScramSha256.Conversation conversation = new ScramSha256.Conversation(node.users(), database);
                byte[] payload = conversation.start(command.getBinary("payload").getData());
                reply = EmulatedNode.ok()
                        .append("conversationId", new BsonInt32(1))
                        .append("done", BsonBoolean.FALSE)
                        .append("payload", new org.bson.BsonBinary(payload));
                connection.authConversation(new SaslState(
                        conversation,
                        command.getDocument("options", new BsonDocument())
                                .getBoolean("skipEmptyExchange", BsonBoolean.FALSE)
                                .getValue()));
                return reply;
            }
            if (!(connection.authConversation() instanceof SaslState state)) {
                return StorageEngine.error(17, "ProtocolError", "No SASL session state found");
            }
            ScramSha256.Conversation conversation = state.conversation();
            boolean skipEmptyExchange = state.skipEmptyExchange();
            if (conversation.finished()) {
                connection.authConversation(null);
                connection.principal(conversation.principal());
                return EmulatedNode.ok()
                        .append("conversationId", new BsonInt32(1))
                        .append("done", BsonBoolean.TRUE)
                        .append("payload", new org.bson.BsonBinary(new byte[0]));
            }
            byte[] payload = conversation.finish(command.getBinary("payload").getData());
            if (skipEmptyExchange) {
                connection.authConversation(null);
                connection.principal(conversation.principal());
            }
            return EmulatedNode.ok()
                    .append("conversationId", new BsonInt32(1))
                    .append("done", BsonBoolean.valueOf(skipEmptyExchange))
                    .append("payload", new org.bson.BsonBinary(payload));
        } catch (ScramSha256.Failure | org.bson.BsonInvalidOperationException e) {
            connection.authConversation(null);
            return StorageEngine.error(18, "AuthenticationFailed", "Authentication failed.");
        }
    }
}
