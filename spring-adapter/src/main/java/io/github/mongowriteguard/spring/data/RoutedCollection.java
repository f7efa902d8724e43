package io.github.mongowriteguard.spring.data;

import com.mongodb.client.ClientSession;
import com.mongodb.client.MongoCollection;
import java.lang.reflect.InvocationHandler;
import java.lang.reflect.Method;
import java.lang.reflect.Proxy;
import org.jspecify.annotations.Nullable;

/**
 * A collection as {@link GuardedMongoTemplate} hands it to Spring Data's template code: the driver's
 * {@link MongoCollection} interface, whose write methods go to the guard's
 * {@link io.github.mongowriteguard.GuardedCollection#asMongoCollection() view} (or, for a group set to plain, to the
 * driver's collection), and every other method to the driver's collection. The {@code withX} methods return a routed
 * collection again, so the write concern Spring applies per write keeps it guarded.
 *
 * <p>Bound to a session (a {@code withSession(...)} template, or a transaction of {@code MongoTransactionManager}),
 * it calls the {@code ClientSession} overload of each method with that session, as Spring Data's own session proxy
 * does: the guard then writes on the caller's session, and inside a multi-document transaction calls the driver as it
 * is ({@code GuardedCollection}'s session overloads).
 */
final class RoutedCollection implements InvocationHandler {
    private final MongoCollection<?> collection;
    private final @Nullable ClientSession session;
    private final GuardedDatabaseFactory factory;
    private volatile @Nullable MongoCollection<?> guarded;

    private RoutedCollection(
            MongoCollection<?> collection, @Nullable ClientSession session, GuardedDatabaseFactory factory) {
        this.collection = collection;
        this.session = session;
        this.factory = factory;
    }

    @SuppressWarnings("unchecked")
    static <T> MongoCollection<T> of(
            MongoCollection<T> collection, @Nullable ClientSession session, GuardedDatabaseFactory factory) {
        return (MongoCollection<T>) Proxy.newProxyInstance(
                MongoCollection.class.getClassLoader(),
                new Class<?>[] {MongoCollection.class},
                new RoutedCollection(collection, session, factory));
    }

    static boolean isRouted(Object collection) {
        return Proxy.isProxyClass(collection.getClass())
                && Proxy.getInvocationHandler(collection) instanceof RoutedCollection;
    }

    @Override
    public @Nullable Object invoke(Object proxy, Method method, @Nullable Object[] args) throws Throwable {
        if (method.getDeclaringClass() == Object.class) {
            return SessionOverloads.objectMethod(proxy, method, args, toString());
        }
        if (MongoCollection.class.isAssignableFrom(method.getReturnType())) {
            // withWriteConcern, withReadPreference, withDocumentClass, ...: the new collection is routed the same way
            MongoCollection<?> changed = (MongoCollection<?>) call(collection, method, args);
            return of(changed, session, factory);
        }
        TemplateWriteGroup group = TemplateWriteGroup.ofDriverMethod(method.getName());
        Object target = group != null && factory.isGuarded(group) ? guarded() : collection;
        return call(target, method, args);
    }

    /** The guard's view of this collection, made on first use (the guard checks its client settings there). */
    private MongoCollection<?> guarded() {
        MongoCollection<?> view = guarded;
        if (view == null) {
            view = factory.guard().guardCollection(factory.access(), collection).asMongoCollection();
            guarded = view;
        }
        return view;
    }

    private @Nullable Object call(Object target, Method method, @Nullable Object[] args) throws Throwable {
        return SessionOverloads.call(target, method, args, session, ClientSession.class);
    }

    @Override
    public String toString() {
        return "GuardedMongoTemplate collection{" + collection.getNamespace()
                + (session == null ? "" : ", session bound") + '}';
    }
}
