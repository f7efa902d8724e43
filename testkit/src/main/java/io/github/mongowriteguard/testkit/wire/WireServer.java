package io.github.mongowriteguard.testkit.wire;

import java.io.BufferedInputStream;
import java.io.IOException;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.net.SocketException;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import org.bson.BsonDocument;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A loopback TCP server speaking the MongoDB wire protocol, one thread per connection as mongod does, so a
 * command held by a fail point or a stall never blocks another connection (heartbeats, other clients,
 * {@code currentOp}).
 */
public final class WireServer implements AutoCloseable {
    private static final Logger log = LoggerFactory.getLogger(WireServer.class);
    private static final AtomicLong CONNECTION_IDS = new AtomicLong();

    private final ServerSocket serverSocket;
    private final CommandHandler handler;
    private final String name;
    private final AtomicInteger replyIds = new AtomicInteger();
    private final java.util.concurrent.atomic.LongAdder bytesReceived = new java.util.concurrent.atomic.LongAdder();
    private final java.util.concurrent.atomic.LongAdder messagesReceived = new java.util.concurrent.atomic.LongAdder();
    private final Set<Socket> sockets = ConcurrentHashMap.newKeySet();
    private final Thread acceptor;
    private volatile boolean closed;

    /**
     * Binds to 127.0.0.1 on the given port (0: any free port) and starts accepting.
     *
     * @param name    a label for logs
     * @param port    the port
     * @param handler runs each command
     */
    public WireServer(String name, int port, CommandHandler handler) {
        this.name = name;
        this.handler = handler;
        try {
            this.serverSocket = new ServerSocket();
            serverSocket.setReuseAddress(true);
            serverSocket.bind(new InetSocketAddress(InetAddress.getLoopbackAddress(), port), 256);
        } catch (IOException e) {
            throw new IllegalStateException("cannot bind the emulated server " + name + " to 127.0.0.1:" + port, e);
        }
        this.acceptor = new Thread(this::acceptLoop, "testkit-" + name + "-accept");
        acceptor.setDaemon(true);
        acceptor.start();
    }

    /**
     * {@code 127.0.0.1:port}, the address the server announces in {@code hello}.
     *
     * @return the address
     */
    public String address() {
        return "127.0.0.1:" + serverSocket.getLocalPort();
    }

    /** {@return the bytes of every request message received so far, headers included} */
    public long bytesReceived() {
        return bytesReceived.sum();
    }

    /** {@return the request messages received so far (handshakes and heartbeats included)} */
    public long messagesReceived() {
        return messagesReceived.sum();
    }

    /** {@return the port the server is bound to} */
    public int port() {
        return serverSocket.getLocalPort();
    }

    private void acceptLoop() {
        while (!closed) {
            try {
                Socket socket = serverSocket.accept();
                socket.setTcpNoDelay(true);
                sockets.add(socket);
                ClientConnection connection = new ClientConnection(CONNECTION_IDS.incrementAndGet(), socket);
                Thread thread = new Thread(() -> serve(socket, connection), "testkit-" + name + "-" + connection);
                thread.setDaemon(true);
                thread.start();
            } catch (IOException e) {
                if (!closed) {
                    log.warn("accept failed on {}", name, e);
                }
            }
        }
    }

    private void serve(Socket socket, ClientConnection connection) {
        try (socket) {
            BufferedInputStream in = new BufferedInputStream(socket.getInputStream(), 64 * 1024);
            OutputStream out = socket.getOutputStream();
            while (!closed) {
                WireMessage request = WireMessage.read(in);
                if (request == null) {
                    return;
                }
                bytesReceived.add(request.length());
                messagesReceived.increment();
                BsonDocument reply;
                connection.documentSequences(request.sequenceFields());
                try {
                    reply = handler.handle(connection, request.database(), request.body());
                } catch (CommandHandler.CloseConnectionSignal signal) {
                    return;
                }
                if (request.moreToCome()) {
                    continue;
                }
                // A client that gave up (socket timeout) has closed its end: the write below fails, as it
                // does for mongod, after the command already ran.
                out.write(request.encodeReply(replyIds.incrementAndGet(), reply));
                out.flush();
            }
        } catch (SocketException e) {
            log.debug("{} {}: connection ended: {}", name, connection, e.getMessage());
        } catch (IOException | RuntimeException e) {
            if (!closed) {
                log.debug("{} {}: connection failed", name, connection, e);
            }
        } finally {
            sockets.remove(socket);
        }
    }

    @Override
    public void close() {
        closed = true;
        try {
            serverSocket.close();
        } catch (IOException ignored) {
            // closing anyway
        }
        for (Socket socket : sockets) {
            try {
                socket.close();
            } catch (IOException ignored) {
                // closing anyway
            }
        }
    }
}
