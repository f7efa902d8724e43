package io.github.mongowriteguard;

import com.mongodb.reactivestreams.client.MongoCollection;
import java.lang.reflect.InvocationHandler;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Method;
import java.lang.reflect.Proxy;
import java.util.Collections;
import java.util.HashMap;
import java.util.HashSet;
import java.util.Map;
import java.util.Set;
import java.util.function.UnaryOperator;
import org.jspecify.annotations.Nullable;

/**
 * The driver's reactive {@code MongoCollection} interface over a guarded collection (what its
 * {@code asMongoCollection()} returns): the interface's write methods are the guarded collection's methods of the same
 * signature, its other methods (reads, indexes, aggregations, change streams) the driver's. A {@code withX(...)} that
 * returns another collection returns that collection's view, guarded the same way. A write method of the interface the
 * guarded collection does not have (a later driver's) is refused with a message, never sent unguarded;
 * {@code GuardedReactiveCollectionTest} checks that the driver this is built with has none.
 *
 * <p>It names no guarded type: the guarded collection hands it its {@link Routes} (found once from its class) and how
 * a changed collection is guarded and viewed, so the view stands below the collection it views.
 */
final class GuardedReactiveCollectionView implements InvocationHandler {
    /** The driver's write methods, by name. */
    static final Set<String> WRITES = Set.of(
            "bulkWrite",
            "insertOne",
            "insertMany",
            "updateOne",
            "updateMany",
            "replaceOne",
            "deleteOne",
            "deleteMany",
            "findOneAndDelete",
            "findOneAndReplace",
            "findOneAndUpdate");

    /**
     * Each write method of the driver's interface, to the guarded class's method of the same signature (or null).
     *
     * @param writes the interface's write methods and the guarded class's counterparts
     */
    record Routes(Map<Method, @Nullable Method> writes) {
        /** {@return the routes of the driver's write methods to {@code guarded}'s methods of the same signature} */
        static Routes to(Class<?> guarded) {
            Map<Method, @Nullable Method> methods = new HashMap<>();
            for (Method method : MongoCollection.class.getMethods()) {
                if (WRITES.contains(method.getName())) {
                    Method own;
                    try {
                        own = guarded.getMethod(method.getName(), method.getParameterTypes());
                    } catch (NoSuchMethodException e) {
                        own = null;
                    }
                    methods.put(method, own);
                }
            }
            return new Routes(Collections.unmodifiableMap(methods));
        }

        /** {@return the interface's write methods the guarded class lacks (none with the driver it is built with)} */
        Set<Method> unguarded() {
            Set<Method> missing = new HashSet<>();
            writes.forEach((method, own) -> {
                if (own == null) {
                    missing.add(method);
                }
            });
            return missing;
        }
    }

    private final Routes routes;
    private final Object guarded;
    private final MongoCollection<?> driver;
    private final UnaryOperator<MongoCollection<?>> viewOfChanged;

    private GuardedReactiveCollectionView(
            Routes routes, Object guarded, MongoCollection<?> driver, UnaryOperator<MongoCollection<?>> viewOfChanged) {
        this.routes = routes;
        this.guarded = guarded;
        this.driver = driver;
        this.viewOfChanged = viewOfChanged;
    }

    /**
     * The view of {@code guarded} over {@code driver}.
     *
     * @param routes        the write methods to {@code guarded}'s, {@link Routes#to} its class
     * @param guarded       the guarded collection
     * @param driver        the driver's collection behind it
     * @param viewOfChanged a collection a {@code withX(...)} returned, guarded as {@code guarded} is, and viewed
     */
    @SuppressWarnings("unchecked") // the proxy implements MongoCollection for the guarded collection's class
    static <T> MongoCollection<T> of(
            Routes routes, Object guarded, MongoCollection<T> driver, UnaryOperator<MongoCollection<?>> viewOfChanged) {
        return (MongoCollection<T>) Proxy.newProxyInstance(
                GuardedReactiveCollectionView.class.getClassLoader(),
                new Class<?>[] {MongoCollection.class},
                new GuardedReactiveCollectionView(routes, guarded, driver, viewOfChanged));
    }

    @Override
    public @Nullable Object invoke(Object proxy, Method method, @Nullable Object[] args) throws Throwable {
        if (method.getDeclaringClass() == Object.class) {
            return switch (method.getName()) {
                case "equals" -> args != null && proxy == args[0];
                case "hashCode" -> System.identityHashCode(proxy);
                default -> "guarded view of " + guarded;
            };
        }
        if (routes.writes().containsKey(method)) {
            Method own = routes.writes().get(method);
            if (own == null) {
                throw new UnsupportedOperationException("the guard does not know the driver's write method " + method
                        + " (a driver newer than the guard's?); nothing was sent: use a method the guard knows, or"
                        + " unwrap() to send it unguarded");
            }
            return call(own, guarded, args);
        }
        Object result = call(method, driver, args);
        if (result instanceof MongoCollection<?> changed && method.getName().startsWith("with")) {
            return viewOfChanged.apply(changed);
        }
        return result;
    }

    private static @Nullable Object call(Method method, Object target, @Nullable Object[] args) throws Throwable {
        try {
            return method.invoke(target, args);
        } catch (InvocationTargetException e) {
            throw e.getCause();
        }
    }
}
