package io.github.mongowriteguard.testkit.wire;

import org.bson.BsonDocument;

/**
 * What a {@link WireServer} calls for every request; runs on the connection's own thread.
 *
 * <p>Implemented by the library only (the testkit's nodes implement it).
 */
@FunctionalInterface
public interface CommandHandler {
    /**
     * Runs one command and returns its reply.
     *
     * @throws CloseConnectionSignal to drop the connection without a reply
     * @param connection the client connection
     * @param database   the command's database ({@code $db})
     * @param command    the command
     * @return the reply
     */
    BsonDocument handle(ClientConnection connection, String database, BsonDocument command);

    /** Thrown by a handler to close the client's connection instead of replying. */
    final class CloseConnectionSignal extends RuntimeException {
        private static final long serialVersionUID = 1L;

        /** A signal to close the connection; it carries no stack trace. */
        public CloseConnectionSignal() {
            super("close connection", null, false, false);
        }
    }
}
