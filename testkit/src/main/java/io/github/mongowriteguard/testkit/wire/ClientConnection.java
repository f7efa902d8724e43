package io.github.mongowriteguard.testkit.wire;

import io.github.mongowriteguard.testkit.auth.Principal;
import java.io.IOException;
import java.net.Socket;

/**
 * One client connection as the server sees it: an id, the peer's address, the driver's appName and the user
 * authenticated on it.
 */
public final class ClientConnection {
    private final long id;
    private final Socket socket;
    private volatile String appName;
    private volatile Principal principal;
    private volatile Object authConversation;
    private volatile java.util.Set<String> documentSequences = java.util.Set.of();
    private volatile long lastOp;

    ClientConnection(long id, Socket socket) {
        this.id = id;
        this.socket = socket;
    }

    /**
     * For commands that the testkit runs in-process (mongos to shard), with no socket behind them.
     *
     * @param id      the connection id
     * @param appName the application name the commands carry, or null
     * @return the connection
     */
    public static ClientConnection internal(long id, String appName) {
        return internal(id, appName, null);
    }

    /**
     * For commands that mongos runs on a shard for a client: the shard trusts mongos (as a cluster member with
     * the keyfile's {@code __system} user) and sees {@code onBehalfOf} as the operation's user, as mongos' impersonated
     * user metadata makes it.
     *
     * @param id         the connection id
     * @param appName    the application name the commands carry, or null
     * @param onBehalfOf the client's user, or null
     * @return the connection
     */
    public static ClientConnection internal(long id, String appName, Principal onBehalfOf) {
        ClientConnection connection = new ClientConnection(id, null);
        connection.appName = appName;
        connection.principal = onBehalfOf;
        return connection;
    }

    /**
     * Whether this is mongos' in-process connection to a shard (trusted, whatever its user).
     *
     * @return true for an in-process connection
     */
    public boolean isInternal() {
        return socket == null;
    }

    /**
     * The user authenticated on this connection (the client's user for an internal one), or null.
     *
     * @return the user, or null
     */
    public Principal principal() {
        return principal;
    }

    /**
     * Sets the user authenticated on this connection.
     *
     * @param user the user, or null
     */
    public void principal(Principal user) {
        this.principal = user;
    }

    /**
     * The body fields of the request being served that arrived as OP_MSG document sequences.
     *
     * @return the field names
     */
    public java.util.Set<String> documentSequences() {
        return documentSequences;
    }

    /**
     * Sets the body fields of the request being served that arrived as OP_MSG document sequences.
     *
     * @param fields the field names
     */
    public void documentSequences(java.util.Set<String> fields) {
        this.documentSequences = fields;
    }

    /**
     * The op time of the last write this connection made, 0 before the first ({@code ReplClientInfo::getLastOp}): the
     * server compares it before and after a command to tell that the command wrote nothing.
     *
     * @return the op time
     */
    public long lastOp() {
        return lastOp;
    }

    /**
     * Records the op time of a write this connection made; the last op time never moves back.
     *
     * @param opTime the write's op time
     */
    public void lastOp(long opTime) {
        this.lastOp = Math.max(this.lastOp, opTime);
    }

    /**
     * The SASL conversation under way on this connection, or null.
     *
     * @return the conversation, or null
     */
    public Object authConversation() {
        return authConversation;
    }

    /**
     * Sets the SASL conversation under way on this connection.
     *
     * @param conversation the conversation, or null
     */
    public void authConversation(Object conversation) {
        this.authConversation = conversation;
    }

    /** {@return the connection id} */
    public long id() {
        return id;
    }

    /** {@return the {@code client.application.name} of the handshake, or null} */
    public String appName() {
        return appName;
    }

    /**
     * Records the application name the handshake gave.
     *
     * @param name the {@code client.application.name}
     */
    public void appName(String name) {
        this.appName = name;
    }

    /** {@return the client's address, or {@code internal} for an in-process connection} */
    public String peer() {
        return socket == null ? "internal" : socket.getInetAddress().getHostAddress() + ":" + socket.getPort();
    }

    /** Closes the socket without a reply, as the failCommand fail point's {@code closeConnection} does. */
    public void close() {
        if (socket != null) {
            try {
                socket.close();
            } catch (IOException ignored) {
                // already closed by the peer
            }
        }
    }

    @Override
    public String toString() {
        return "conn" + id + (appName == null ? "" : "(" + appName + ")");
    }
}
