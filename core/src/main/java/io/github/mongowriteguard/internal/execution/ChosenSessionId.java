package io.github.mongowriteguard.internal.execution;

import com.mongodb.session.ClientSession;
import com.mongodb.session.ServerSession;
import java.lang.reflect.InvocationHandler;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Method;
import java.lang.reflect.Proxy;
import java.util.LinkedHashSet;
import java.util.Set;
import java.util.UUID;
import org.bson.BsonBinary;
import org.bson.BsonDocument;

/**
 * A driver session that carries a caller-chosen logical session id: the driver's own session (so its originator,
 * cluster time and pinning are the driver's, and {@code runCommand(session, ...)} accepts it), whose server session
 * answers {@code getIdentifier()} with {@code {id: <the caller's UUID>}} and the caller's transaction number. The
 * driver reads the {@code lsid} of a command from {@code getServerSession().getIdentifier()} and marks it dirty after
 * a network error ({@code markDirty}, passed on so that the pool drops the driver's own server session). The guard
 * never advances the number of such a session: each command carries the caller's {@code txnNumber}.
 */
final class ChosenSessionId {
    private ChosenSessionId() {}

    /**
     * {@code session} (the synchronous or the reactive driver's), seen with the given identity.
     *
     * @param session   a session the guard started; closing the result closes it
     * @param id        the caller's logical session id
     * @param txnNumber the caller's transaction number
     */
    static ClientSession wrap(ClientSession session, UUID id, long txnNumber) {
        ServerSession server = new Chosen(session.getServerSession(), id, txnNumber);
        Set<Class<?>> interfaces = new LinkedHashSet<>();
        for (Class<?> type = session.getClass(); type != null; type = type.getSuperclass()) {
            collect(type, interfaces);
        }
        InvocationHandler handler = (proxy, method, args) -> {
            if (method.getName().equals("getServerSession") && method.getParameterCount() == 0) {
                return server;
            }
            // identity, as the driver's own session (Sessions and the settle hold find a session in their lists)
            if (method.getName().equals("equals") && method.getParameterCount() == 1) {
                return proxy == args[0];
            }
            if (method.getName().equals("hashCode") && method.getParameterCount() == 0) {
                return System.identityHashCode(proxy);
            }
            return invoke(session, method, args);
        };
        return (ClientSession) Proxy.newProxyInstance(
                ChosenSessionId.class.getClassLoader(), interfaces.toArray(Class<?>[]::new), handler);
    }

    private static void collect(Class<?> type, Set<Class<?>> into) {
        for (Class<?> implemented : type.getInterfaces()) {
            if (into.add(implemented)) {
                collect(implemented, into);
            }
        }
    }

    private static Object invoke(Object target, Method method, Object[] args) throws Throwable {
        try {
            return method.invoke(target, args);
        } catch (InvocationTargetException e) {
            throw e.getCause();
        }
    }

    /** The server session a chosen identity is sent with. */
    private static final class Chosen implements ServerSession {
        private final ServerSession drivers;
        private final BsonDocument identifier;
        private final long txnNumber;
        private volatile boolean dirty;

        Chosen(ServerSession drivers, UUID id, long txnNumber) {
            this.drivers = drivers;
            this.identifier = new BsonDocument("id", new BsonBinary(id));
            this.txnNumber = txnNumber;
        }

        @Override
        public BsonDocument getIdentifier() {
            return identifier;
        }

        @Override
        public long getTransactionNumber() {
            return txnNumber;
        }

        @Override
        public long advanceTransactionNumber() {
            throw new IllegalStateException("a session with a caller-chosen id carries the caller's txnNumber "
                    + txnNumber + "; the guard never advances it");
        }

        @Override
        public boolean isClosed() {
            return drivers.isClosed();
        }

        @Override
        public void markDirty() {
            dirty = true;
            drivers.markDirty();
        }

        @Override
        public boolean isMarkedDirty() {
            return dirty;
        }
    }
}
