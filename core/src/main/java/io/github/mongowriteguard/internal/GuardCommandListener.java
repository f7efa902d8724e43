package io.github.mongowriteguard.internal;

import com.mongodb.ServerAddress;
import com.mongodb.event.CommandListener;
import com.mongodb.event.CommandStartedEvent;

/**
 * The listener the guard registers on the client's {@link com.mongodb.MongoClientSettings.Builder}. It learns the
 * server's wire version (to know whether write commands accept {@code comment}) and the address writes go to.
 * It never reads document contents.
 */
public final class GuardCommandListener implements CommandListener {
    private volatile int maxWireVersion = -1;
    private volatile ServerAddress lastServer = new ServerAddress();
    /** The sync driver raises command events on the thread that runs the command: the server of this thread's last one. */
    private final ThreadLocal<ServerAddress> serverOfThisThread = new ThreadLocal<>();

    @Override
    public void commandStarted(CommandStartedEvent event) {
        maxWireVersion = event.getConnectionDescription().getMaxWireVersion();
        lastServer = event.getConnectionDescription().getServerAddress();
        serverOfThisThread.set(lastServer);
    }

    /**
     * The server the calling thread's last command went to (the sync driver starts a command on the caller's thread),
     * or null before its first one. Read right after a send, it names that send's server.
     */
    public ServerAddress serverOfLastCommandOnThisThread() {
        return serverOfThisThread.get();
    }

    /** The wire version of the last server a command went to, or -1 before the first command. */
    public int maxWireVersion() {
        return maxWireVersion;
    }

    public ServerAddress lastServer() {
        return lastServer;
    }
}
