package io.github.mongowriteguard.spring.data;

import com.mongodb.ClientSessionOptions;
import com.mongodb.MongoBulkWriteException;
import com.mongodb.MongoWriteConcernException;
import com.mongodb.MongoWriteException;
import com.mongodb.client.ClientSession;
import com.mongodb.client.MongoClient;
import com.mongodb.client.MongoCluster;
import com.mongodb.client.MongoCollection;
import com.mongodb.client.MongoDatabase;
import io.github.mongowriteguard.MongoAccess;
import io.github.mongowriteguard.WriteGuard;
import io.github.mongowriteguard.exception.GuardedBulkWriteException;
import io.github.mongowriteguard.exception.GuardedWriteConcernException;
import io.github.mongowriteguard.exception.GuardedWriteException;
import io.github.mongowriteguard.exception.WriteGuardException;
import java.lang.reflect.Constructor;
import java.lang.reflect.Method;
import java.util.EnumSet;
import java.util.Objects;
import java.util.Set;
import org.bson.codecs.configuration.CodecRegistry;
import org.jspecify.annotations.Nullable;
import org.springframework.aop.framework.ProxyFactory;
import org.springframework.aop.support.AopUtils;
import org.springframework.core.InfrastructureProxy;
import org.springframework.dao.DataAccessException;
import org.springframework.dao.support.PersistenceExceptionTranslator;
import org.springframework.data.mongodb.MongoDatabaseFactory;
import org.springframework.data.mongodb.SessionAwareMethodInterceptor;
import org.springframework.data.mongodb.core.MongoDatabaseFactorySupport;
import org.springframework.util.Assert;
import org.springframework.util.ReflectionUtils;

/**
 * The database factory a {@link GuardedMongoTemplate} runs on: the application's factory, and where the template's
 * sessions are bound.
 *
 * <p>Why a factory: Spring Data MongoDB binds a session in one place, {@code MongoDatabaseFactory.withSession(session)}.
 * Both {@code MongoTemplate.withSession(ClientSession)} ({@code new SessionBoundMongoTemplate(session, this)}, whose
 * constructor calls {@code that.getMongoDatabaseFactory().withSession(session)}) and a transaction of
 * {@code MongoTransactionManager} ({@code MongoDatabaseUtils.doGetMongoDatabase}: {@code factory.withSession(session)})
 * ask the template's factory (spring-data-mongodb 5.0.5 tag, {@code core/MongoTemplate.java},
 * {@code MongoDatabaseUtils.java}). Spring's own bound factory ({@code MongoDatabaseFactorySupport
 * .ClientSessionBoundMongoDbFactory}) hands out opaque proxies that hide the session, so a collection prepared from
 * them could not tell the guard which session to write on. This factory binds sessions itself, with Spring's public
 * {@link SessionAwareMethodInterceptor} for databases, and hands out {@link RoutedCollection}s that carry the session.
 *
 * <p>It is an {@link InfrastructureProxy} of the application's factory, so Spring's transaction synchronization
 * (which unwraps infrastructure proxies when it binds and looks up resources) finds the session of a
 * {@code MongoTransactionManager} built on either factory.
 */
final class GuardedDatabaseFactory implements MongoDatabaseFactory, InfrastructureProxy {
    private final MongoDatabaseFactory delegate;
    private final WriteGuard guard;
    private final MongoAccess access;
    private final PersistenceExceptionTranslator translator = this::translate;
    private volatile Set<TemplateWriteGroup> plain = EnumSet.noneOf(TemplateWriteGroup.class);

    /**
     * @param delegate the application's factory
     * @param guard    the guard
     * @param client   the client behind {@code delegate}, or null to find it ({@link #clientOf})
     */
    GuardedDatabaseFactory(MongoDatabaseFactory delegate, WriteGuard guard, @Nullable MongoClient client) {
        Assert.notNull(delegate, "MongoDbFactory must not be null"); // MongoTemplate's own message
        this.delegate = delegate;
        this.guard = Objects.requireNonNull(guard, "guard");
        @Nullable MongoClient named = client != null ? client : clientOf(delegate);
        // The guard's own sessions and commands use the application's factory, never a session-bound one; the access
        // names the factory's client, so a guard configured on several clients (a second client, or the reactive
        // client Boot builds from the same customizers) finds what it read from this one's builder.
        this.access = new MongoAccess() {
            @Override
            public ClientSession startSession(ClientSessionOptions options) {
                return delegate.getSession(options);
            }

            @Override
            public MongoDatabase getDatabase(String name) {
                return delegate.getMongoDatabase(name);
            }

            @Override
            public @Nullable MongoClient client() {
                return named;
            }
        };
    }

    /**
     * The client behind a Spring Data factory: {@code MongoDatabaseFactorySupport} (the base of Spring's
     * {@code SimpleMongoClientDatabaseFactory}, which Spring Boot and {@code MongoTemplate(MongoClient, String)} build)
     * holds it and reads it through its protected {@code getMongoClient()} (spring-data-mongodb 5.0,
     * {@code core/MongoDatabaseFactorySupport.java}); no public method returns it. Null for any other factory: the
     * guard must then have configured one client only, or the template must be given its client.
     */
    static @Nullable MongoClient clientOf(MongoDatabaseFactory factory) {
        if (!(factory instanceof MongoDatabaseFactorySupport<?>)) {
            return null;
        }
        Method getter = ReflectionUtils.findMethod(MongoDatabaseFactorySupport.class, "getMongoClient");
        if (getter == null) {
            return null;
        }
        try {
            ReflectionUtils.makeAccessible(getter);
            return ReflectionUtils.invokeMethod(getter, factory) instanceof MongoClient client ? client : null;
        } catch (RuntimeException inaccessible) { // a module system that refuses the reflective call
            return null;
        }
    }

    WriteGuard guard() {
        return guard;
    }

    MongoAccess access() {
        return access;
    }

    boolean isGuarded(TemplateWriteGroup group) {
        return !plain.contains(group);
    }

    Set<TemplateWriteGroup> plainGroups() {
        return plain;
    }

    void setPlainGroups(java.util.Collection<TemplateWriteGroup> groups) {
        EnumSet<TemplateWriteGroup> copy = EnumSet.noneOf(TemplateWriteGroup.class);
        copy.addAll(groups);
        this.plain = java.util.Collections.unmodifiableSet(copy);
    }

    /**
     * The collection routed through the guard, on {@code session} when given. A collection routed already (one of a
     * session-bound database of this factory) is returned as it is.
     *
     * @throws IllegalStateException for a session-bound proxy this factory did not make: its session is unknown, and
     *                               writing without it would leave the caller's session or transaction
     */
    <T> MongoCollection<T> route(MongoCollection<T> collection, @Nullable ClientSession session) {
        if (RoutedCollection.isRouted(collection)) {
            return collection;
        }
        if (AopUtils.isAopProxy(collection)) {
            throw new IllegalStateException(
                    "GuardedMongoTemplate was given a session-bound collection it did not bind ("
                            + collection.getNamespace()
                            + "); the guard cannot see its session. Bind sessions through the template"
                            + " (withSession, MongoTransactionManager) so its writes stay on the caller's session");
        }
        return RoutedCollection.of(collection, session, this);
    }

    @Override
    public MongoDatabase getMongoDatabase() throws DataAccessException {
        return delegate.getMongoDatabase();
    }

    @Override
    public MongoDatabase getMongoDatabase(String dbName) throws DataAccessException {
        return delegate.getMongoDatabase(dbName);
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
    public ClientSession getSession(ClientSessionOptions options) {
        return delegate.getSession(options);
    }

    @Override
    public MongoDatabaseFactory withSession(ClientSession session) {
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

    /**
     * Spring's translation of the application's factory. Spring Data's {@code MongoExceptionTranslator} matches the
     * driver's exceptions by their simple class name ({@code "MongoBulkWriteException"}), so the guard's
     * {@link GuardedBulkWriteException} is translated as the driver's {@link MongoBulkWriteException} with the same
     * result and errors, whose cause is the guard's exception (with its complete outcome); likewise
     * {@link GuardedWriteException} and {@link GuardedWriteConcernException} as the driver's
     * {@link MongoWriteException} and {@link MongoWriteConcernException}. The guard's other final answers
     * ({@link WriteGuardException}s: copy still running, outcome unknown, deadline exceeded) become a
     * {@link GuardedWriteRetryableException} (transient) or {@link GuardedWriteNotRetryableException} (non-transient),
     * whichever {@link GuardedWriteOutcomes#resendSafe} says, so that a retry of transient data-access exceptions never
     * resends what the guard refused to.
     */
    private @Nullable DataAccessException translate(RuntimeException ex) {
        return translate(ex, delegate.getExceptionTranslator());
    }

    /**
     * The translation of {@link #translate(RuntimeException)}, over a factory's own translator: shared with
     * {@link GuardedReactiveDatabaseFactory}, whose guard throws the same exceptions.
     */
    static @Nullable DataAccessException translate(
            RuntimeException ex, PersistenceExceptionTranslator delegateTranslator) {
        if (ex instanceof WriteGuardException guardAnswer) {
            DataAccessException translated = GuardedWriteOutcomes.translate(guardAnswer);
            if (translated != null) {
                return translated;
            }
        }
        RuntimeException toTranslate = ex;
        if (ex instanceof GuardedBulkWriteException guarded) {
            MongoBulkWriteException asDriver = new MongoBulkWriteException(
                    guarded.getWriteResult(),
                    guarded.getWriteErrors(),
                    guarded.getWriteConcernError(),
                    guarded.getServerAddress(),
                    guarded.getErrorLabels());
            asDriver.initCause(guarded);
            toTranslate = asDriver;
        } else if (ex instanceof GuardedWriteException guarded) {
            MongoWriteException asDriver =
                    new MongoWriteException(guarded.getError(), guarded.getServerAddress(), guarded.getErrorLabels());
            asDriver.initCause(guarded);
            toTranslate = asDriver;
        } else if (ex instanceof GuardedWriteConcernException guarded) {
            MongoWriteConcernException asDriver = new MongoWriteConcernException(
                    guarded.getWriteConcernError(),
                    guarded.getWriteResult(),
                    guarded.getServerAddress(),
                    guarded.getErrorLabels());
            asDriver.initCause(guarded);
            toTranslate = asDriver;
        }
        return delegateTranslator.translateExceptionIfPossible(toTranslate);
    }

    @Override
    public String toString() {
        return "GuardedDatabaseFactory{" + delegate + '}';
    }

    /** This factory bound to a session: databases that pass it on, collections routed on it. */
    private final class SessionBound implements MongoDatabaseFactory {
        private final ClientSession session;

        SessionBound(ClientSession session) {
            this.session = Objects.requireNonNull(session, "session");
        }

        @Override
        public MongoDatabase getMongoDatabase() throws DataAccessException {
            return bind(delegate.getMongoDatabase());
        }

        @Override
        public MongoDatabase getMongoDatabase(String dbName) throws DataAccessException {
            return bind(delegate.getMongoDatabase(dbName));
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
        public ClientSession getSession(ClientSessionOptions options) {
            return delegate.getSession(options);
        }

        @Override
        public MongoDatabaseFactory withSession(ClientSession other) {
            return GuardedDatabaseFactory.this.withSession(other);
        }

        @Override
        public boolean isTransactionActive() {
            return session.hasActiveTransaction();
        }

        /**
         * The database's methods get the session as Spring's bound factory gives it (its public
         * {@link SessionAwareMethodInterceptor}); its collections are routed on the session.
         */
        private MongoDatabase bind(MongoDatabase database) {
            ProxyFactory proxy = new ProxyFactory();
            proxy.setTarget(database);
            proxy.setInterfaces(MongoDatabase.class);
            proxy.setOpaque(true);
            SessionAwareMethodInterceptor.ClientSessionOperator<MongoDatabase> databases = (s, db) -> bind(db);
            SessionAwareMethodInterceptor.ClientSessionOperator<MongoCollection> collections =
                    (s, collection) -> route(collection, session);
            proxy.addAdvice(sessionInterceptor(session, database, databases, collections));
            return (MongoDatabase) proxy.getProxy(MongoDatabase.class.getClassLoader());
        }

        @Override
        public String toString() {
            return "GuardedDatabaseFactory.SessionBound{" + delegate + '}';
        }
    }

    /**
     * Spring's {@link SessionAwareMethodInterceptor} for a database bound to {@code session}. Its public constructor
     * differs between the Spring Data MongoDB versions the adapter supports: 5.0 takes {@code (session, target,
     * sessionType, databaseType, databaseOperator, collectionType, collectionOperator)}; 5.1 (Spring Boot 4.1) adds the
     * client type after the target (Spring's own session-bound factory passes {@code MongoCluster}). One jar runs on
     * both, so the constructor is chosen once, by its parameter count ({@link #INTERCEPTOR}).
     */
    static SessionAwareMethodInterceptor<?, ?> sessionInterceptor(
            ClientSession session,
            MongoDatabase database,
            SessionAwareMethodInterceptor.ClientSessionOperator<MongoDatabase> databases,
            SessionAwareMethodInterceptor.ClientSessionOperator<MongoCollection> collections) {
        Constructor<?> constructor = INTERCEPTOR;
        if (constructor == null) {
            throw new IllegalStateException("This Spring Data MongoDB version's SessionAwareMethodInterceptor has no"
                    + " constructor the guard knows (Spring Data MongoDB 5.0 and 5.1 are supported; see the README's"
                    + " compatibility section)");
        }
        Object[] arguments = constructor.getParameterCount() == 8
                ? new Object[] {
                    session,
                    database,
                    MongoCluster.class,
                    ClientSession.class,
                    MongoDatabase.class,
                    databases,
                    MongoCollection.class,
                    collections
                }
                : new Object[] {
                    session,
                    database,
                    ClientSession.class,
                    MongoDatabase.class,
                    databases,
                    MongoCollection.class,
                    collections
                };
        try {
            return (SessionAwareMethodInterceptor<?, ?>) constructor.newInstance(arguments);
        } catch (ReflectiveOperationException e) {
            throw new IllegalStateException(
                    "Spring Data MongoDB's SessionAwareMethodInterceptor could not be built: " + e, e);
        }
    }

    /** The constructor of {@link SessionAwareMethodInterceptor} this Spring Data version has (7 or 8 parameters). */
    private static final @Nullable Constructor<?> INTERCEPTOR = interceptorConstructor();

    private static @Nullable Constructor<?> interceptorConstructor() {
        for (Constructor<?> constructor : SessionAwareMethodInterceptor.class.getConstructors()) {
            if (constructor.getParameterCount() == 7 || constructor.getParameterCount() == 8) {
                return constructor;
            }
        }
        return null;
    }
}
