package io.github.mongowriteguard.spring.data;

import com.mongodb.ClientSessionOptions;
import com.mongodb.reactivestreams.client.ClientSession;
import com.mongodb.reactivestreams.client.MongoClient;
import com.mongodb.reactivestreams.client.MongoCollection;
import com.mongodb.reactivestreams.client.MongoDatabase;
import io.github.mongowriteguard.GuardedReactiveCollection;
import io.github.mongowriteguard.WriteGuard;
import java.lang.reflect.InvocationHandler;
import java.lang.reflect.Method;
import java.lang.reflect.Proxy;
import java.util.Collection;
import java.util.Collections;
import java.util.EnumSet;
import java.util.Objects;
import java.util.Set;
import org.bson.codecs.configuration.CodecRegistry;
import org.jspecify.annotations.Nullable;
import org.springframework.core.InfrastructureProxy;
import org.springframework.dao.DataAccessException;
import org.springframework.dao.support.PersistenceExceptionTranslator;
import org.springframework.data.mongodb.ReactiveMongoDatabaseFactory;
import org.springframework.util.Assert;
import reactor.core.publisher.Mono;

/**
 * The database factory a {@link GuardedReactiveMongoTemplate} runs on: the application's factory, whose databases hand
 * out the guard's {@code asMongoCollection()} views, and where the template's sessions are bound.
 *
 * <p>Why a factory: Spring Data MongoDB 5.0's {@code ReactiveMongoTemplate} gets every collection it writes to from
 * {@code doGetDatabase()} ({@code ReactiveMongoDatabaseUtils.getDatabase(factory, sessionSynchronization)}) and
 * {@code getAndPrepareCollection(db, name)} → {@code db.getCollection(name, Document.class)} (spring-data-mongodb tag
 * 5.0.5, {@code core/ReactiveMongoTemplate.java}: {@code createFlux}/{@code createMono(collectionName, callback)} for
 * insert, save, update, remove, replace and the find-and-modify family; {@code DefaultReactiveBulkOperations.execute()}
 * through {@code execute(collectionName, callback)}). A session ({@code withSession(...)}, a
 * {@code ReactiveMongoTransactionManager} transaction, {@code SessionSynchronization}) is bound in one place,
 * {@code factory.withSession(session)}. Spring's own session-bound factory leaves a collection that is a JDK proxy
 * undecorated ({@code SessionAwareMethodInterceptor.invoke}: {@code if (target instanceof Proxy) return target}), and
 * the guard's view is one: bound through Spring's, a guarded write would leave the caller's session. This factory binds
 * sessions itself: each method of a bound database or collection that has a {@code ClientSession} overload is called
 * through it with the session, so the guard writes on the caller's session and, inside a multi-document transaction,
 * calls the driver as it is.
 *
 * <p>It is an {@link InfrastructureProxy} of the application's factory, so Spring's transaction synchronization finds
 * the session of a {@code ReactiveMongoTransactionManager} built on either factory.
 */
final class GuardedReactiveDatabaseFactory implements ReactiveMongoDatabaseFactory, InfrastructureProxy {
    private final ReactiveMongoDatabaseFactory delegate;
    private final WriteGuard guard;
    private final MongoClient client;
    private final PersistenceExceptionTranslator translator = this::translate;
    private volatile Set<TemplateWriteGroup> plain = EnumSet.noneOf(TemplateWriteGroup.class);

    GuardedReactiveDatabaseFactory(ReactiveMongoDatabaseFactory delegate, WriteGuard guard, MongoClient client) {
        Assert.notNull(delegate, "ReactiveMongoDatabaseFactory must not be null"); // Spring's own message
        this.delegate = delegate;
        this.guard = Objects.requireNonNull(guard, "guard");
        this.client = Objects.requireNonNull(client, "client");
    }

    WriteGuard guard() {
        return guard;
    }

    MongoClient client() {
        return client;
    }

    Set<TemplateWriteGroup> plainGroups() {
        return plain;
    }

    void setPlainGroups(Collection<TemplateWriteGroup> groups) {
        EnumSet<TemplateWriteGroup> copy = EnumSet.noneOf(TemplateWriteGroup.class);
        copy.addAll(groups);
        this.plain = Collections.unmodifiableSet(copy);
    }

    /**
     * The guard's view of a driver collection (guarded writes, the driver's reads); with groups set to plain, their
     * write methods go to the driver's collection.
     */
    <T> MongoCollection<T> guarded(MongoCollection<T> collection) {
        MongoCollection<T> view =
                GuardedReactiveCollection.of(guard, client, collection).asMongoCollection();
        Set<TemplateWriteGroup> plainNow = plain;
        return plainNow.isEmpty() ? view : PlainGroups.of(collection, view, plainNow, this);
    }

    /** A collection whose write methods of plain groups are the driver's, and every other method the guard's view's. */
    private record PlainGroups(
            MongoCollection<?> driver,
            MongoCollection<?> view,
            Set<TemplateWriteGroup> plain,
            GuardedReactiveDatabaseFactory factory)
            implements InvocationHandler {
        @SuppressWarnings("unchecked")
        static <T> MongoCollection<T> of(
                MongoCollection<T> driver,
                MongoCollection<T> view,
                Set<TemplateWriteGroup> plain,
                GuardedReactiveDatabaseFactory factory) {
            return (MongoCollection<T>) Proxy.newProxyInstance(
                    MongoCollection.class.getClassLoader(),
                    new Class<?>[] {MongoCollection.class},
                    new PlainGroups(driver, view, plain, factory));
        }

        @Override
        public @Nullable Object invoke(Object proxy, Method method, @Nullable Object[] args) throws Throwable {
            if (method.getDeclaringClass() == Object.class) {
                return SessionOverloads.objectMethod(
                        proxy, method, args, "guarded " + driver.getNamespace() + ", plain " + plain);
            }
            if (MongoCollection.class.isAssignableFrom(method.getReturnType())) {
                // withWriteConcern, withReadPreference, ...: the new collection is split the same way
                return factory.guarded(
                        (MongoCollection<?>) SessionOverloads.call(driver, method, args, null, Void.class));
            }
            TemplateWriteGroup group = TemplateWriteGroup.ofDriverMethod(method.getName());
            Object target = group != null && plain.contains(group) ? driver : view;
            return SessionOverloads.call(target, method, args, null, Void.class);
        }
    }

    @Override
    public Mono<MongoDatabase> getMongoDatabase() throws DataAccessException {
        return delegate.getMongoDatabase().map(database -> Routed.database(database, null, this));
    }

    @Override
    public Mono<MongoDatabase> getMongoDatabase(String dbName) throws DataAccessException {
        return delegate.getMongoDatabase(dbName).map(database -> Routed.database(database, null, this));
    }

    @Override
    public PersistenceExceptionTranslator getExceptionTranslator() {
        return translator;
    }

    @Override
    public CodecRegistry getCodecRegistry() {
        return delegate.getCodecRegistry();
    }

    @Override
    public Mono<ClientSession> getSession(ClientSessionOptions options) {
        return delegate.getSession(options);
    }

    @Override
    public ReactiveMongoDatabaseFactory withSession(ClientSession session) {
        return new SessionBound(session);
    }

    @Override
    public boolean isTransactionActive() {
        return delegate.isTransactionActive();
    }

    /** The application's factory: the key of Spring's transaction resources. */
    @Override
    public Object getWrappedObject() {
        return delegate;
    }

    private @Nullable DataAccessException translate(RuntimeException ex) {
        return GuardedDatabaseFactory.translate(ex, delegate.getExceptionTranslator());
    }

    @Override
    public String toString() {
        return "GuardedReactiveDatabaseFactory{" + delegate + '}';
    }

    /** This factory bound to a session: databases and collections that call the session overloads. */
    private final class SessionBound implements ReactiveMongoDatabaseFactory {
        private final ClientSession session;

        SessionBound(ClientSession session) {
            this.session = Objects.requireNonNull(session, "session");
        }

        @Override
        public Mono<MongoDatabase> getMongoDatabase() throws DataAccessException {
            return delegate.getMongoDatabase().map(database -> Routed.database(database, session, outer()));
        }

        @Override
        public Mono<MongoDatabase> getMongoDatabase(String dbName) throws DataAccessException {
            return delegate.getMongoDatabase(dbName).map(database -> Routed.database(database, session, outer()));
        }

        private GuardedReactiveDatabaseFactory outer() {
            return GuardedReactiveDatabaseFactory.this;
        }

        @Override
        public PersistenceExceptionTranslator getExceptionTranslator() {
            return translator;
        }

        @Override
        public CodecRegistry getCodecRegistry() {
            return delegate.getCodecRegistry();
        }

        @Override
        public Mono<ClientSession> getSession(ClientSessionOptions options) {
            return delegate.getSession(options);
        }

        @Override
        public ReactiveMongoDatabaseFactory withSession(ClientSession other) {
            return GuardedReactiveDatabaseFactory.this.withSession(other);
        }

        @Override
        public boolean isTransactionActive() {
            return session.hasActiveTransaction();
        }

        @Override
        public String toString() {
            return "GuardedReactiveDatabaseFactory.SessionBound{" + delegate + '}';
        }
    }

    /**
     * A database or collection as the template sees it: a database's collections are the guard's views, a
     * {@code withX(...)} stays routed, and, bound to a session, each method with a {@code ClientSession} overload is
     * called through that overload with the session (as Spring's {@code SessionAwareMethodInterceptor} does).
     */
    static final class Routed implements InvocationHandler {
        private final Object target;
        private final @Nullable ClientSession session;
        private final GuardedReactiveDatabaseFactory factory;

        private Routed(Object target, @Nullable ClientSession session, GuardedReactiveDatabaseFactory factory) {
            this.target = target;
            this.session = session;
            this.factory = factory;
        }

        static MongoDatabase database(
                MongoDatabase database, @Nullable ClientSession session, GuardedReactiveDatabaseFactory factory) {
            return (MongoDatabase) Proxy.newProxyInstance(
                    MongoDatabase.class.getClassLoader(),
                    new Class<?>[] {MongoDatabase.class},
                    new Routed(database, session, factory));
        }

        /** A guard's view, bound to the session (the view itself without one). */
        static MongoCollection<?> collection(
                MongoCollection<?> view, @Nullable ClientSession session, GuardedReactiveDatabaseFactory factory) {
            if (session == null) {
                return view;
            }
            return (MongoCollection<?>) Proxy.newProxyInstance(
                    MongoCollection.class.getClassLoader(),
                    new Class<?>[] {MongoCollection.class},
                    new Routed(view, session, factory));
        }

        @Override
        public @Nullable Object invoke(Object proxy, Method method, @Nullable Object[] args) throws Throwable {
            if (method.getDeclaringClass() == Object.class) {
                return SessionOverloads.objectMethod(
                        proxy, method, args, "guarded " + target + (session == null ? "" : ", session bound"));
            }
            Object result = call(method, args);
            if (result instanceof MongoDatabase database) {
                return database(database, session, factory);
            }
            if (result instanceof MongoCollection<?> collection) {
                // a database's collection becomes the guard's view; a view's withX(...) is a view already
                return collection(
                        target instanceof MongoDatabase ? factory.guarded(collection) : collection, session, factory);
            }
            return result;
        }

        private @Nullable Object call(Method method, @Nullable Object[] args) throws Throwable {
            return SessionOverloads.call(target, method, args, session, ClientSession.class);
        }
    }
}
