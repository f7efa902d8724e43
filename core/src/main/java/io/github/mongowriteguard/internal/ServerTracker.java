package io.github.mongowriteguard.internal;

import com.mongodb.ServerAddress;
import com.mongodb.connection.ServerConnectionState;
import com.mongodb.connection.ServerDescription;
import com.mongodb.connection.ServerType;
import com.mongodb.event.ConnectionCheckedOutEvent;
import com.mongodb.event.ConnectionPoolListener;
import com.mongodb.event.ServerClosedEvent;
import com.mongodb.event.ServerDescriptionChangedEvent;
import com.mongodb.event.ServerListener;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

/**
 * What the guard learns from the driver about the servers of the clients it configured, without command events (a
 * {@code CommandListener} makes the driver build an event and copy every reply): the server each thread's last send
 * went to, from the connection pool's check-outs, and the wire version of the server the last command went to, from the
 * monitor's server descriptions of the server checked out. It never reads document contents.
 *
 * <p>Driver 5.6.5: the sync pool raises {@code connectionCheckedOut} on the thread that asks for the connection
 * ({@code DefaultConnectionPool.get}), the caller's thread inside {@code runCommand}; {@code runCommand} is a read
 * without retries ({@code CommandReadOperation}, {@code retryReads} false), so it checks out exactly one connection,
 * the one the command goes to. Outside a transaction (the guard passes writes in transactions to the driver) no
 * connection is pinned, so every send checks one out. In load-balanced mode the connection's server is the load
 * balancer, as the command events said too.
 */
public final class ServerTracker implements ConnectionPoolListener, ServerListener {
    /**
     * A load balancer's description carries no wire version (the driver does not monitor it): load-balanced mode
     * needs mongos 5.0+ (wire version 13), which answers {@code loadBalanced: true} in {@code hello}.
     */
    static final int LOAD_BALANCED_WIRE_VERSION = 13;

    /** The sync pool checks out on the thread that runs the command: the server of this thread's last send. */
    private final ThreadLocal<ServerAddress> serverOfThisThread = new ThreadLocal<>();
    /** The last wire version each known server reported to the monitor; a server leaves when the driver closes it. */
    private final Map<ServerAddress, Integer> wireVersions = new ConcurrentHashMap<>();

    private volatile int maxWireVersion = -1;

    @Override
    public void connectionCheckedOut(ConnectionCheckedOutEvent event) {
        ServerAddress server = event.getConnectionId().getServerId().getAddress();
        serverOfThisThread.set(server);
        // The driver selected this server on a description it had queued for server listeners before
        // (DefaultSdamServerDescriptionManager.updateDescription); they are told on the cluster's own event thread
        // (AsynchronousClusterEventListener), so on a client's very first check-out it may not be here yet: the
        // version then stays what it was (-1 at first, no guard comment, as before the first command).
        // Written only when it changes: every thread checks out for every send, and a write of the shared field on
        // each check-out would move its cache line between the cores that run the sending threads.
        Integer wireVersion = wireVersions.get(server);
        if (wireVersion != null && maxWireVersion != wireVersion) {
            maxWireVersion = wireVersion;
        }
    }

    @Override
    public void serverDescriptionChanged(ServerDescriptionChangedEvent event) {
        ServerDescription description = event.getNewDescription();
        if (description.getType() == ServerType.LOAD_BALANCER) {
            wireVersions.put(description.getAddress(), LOAD_BALANCED_WIRE_VERSION);
        } else if (description.getState() == ServerConnectionState.CONNECTED
                && description.isOk()
                && description.getMaxWireVersion() > 0) {
            wireVersions.put(description.getAddress(), description.getMaxWireVersion());
        }
        // A server that cannot be reached keeps its last version: it comes back as it was, or is closed.
    }

    @Override
    public void serverClosed(ServerClosedEvent event) {
        wireVersions.remove(event.getServerId().getAddress());
    }

    /**
     * The server of the calling thread's last connection check-out, or null before its first one. Read right after
     * a send, it names that send's server.
     */
    public ServerAddress serverOfLastSendOnThisThread() {
        return serverOfThisThread.get();
    }

    /** The wire version of the server the last command (of any thread) went to, or -1 before the first command. */
    public int maxWireVersion() {
        return maxWireVersion;
    }
}
