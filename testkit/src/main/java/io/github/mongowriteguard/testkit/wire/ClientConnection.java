package io.github.mongowriteguard.testkit.wire;

import java.io.IOException;
import java.net.Socket;

/** One client connection as the server sees it: an id, the peer's address and the driver's appName. */
public final class ClientConnection {
    private final long id;
    private final Socket socket;
    private volatile String appName;

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
        ClientConnection connection = new ClientConnection(id, null);
        connection.appName = appName;
        return connection;
    }

    /** {@return the connection id ({@code connectionId} in {@code currentOp})} */
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
