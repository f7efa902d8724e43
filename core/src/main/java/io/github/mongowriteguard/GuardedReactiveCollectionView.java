package io.github.mongowriteguard;

import com.mongodb.reactivestreams.client.MongoCollection;
import java.lang.reflect.InvocationHandler;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Method;
import java.lang.reflect.Proxy;
import java.util.HashMap;
import java.util.Map;
import java.util.Set;
import org.jspecify.annotations.Nullable;

/**
 * {@link GuardedReactiveCollection#asMongoCollection()}: the driver's reactive {@code MongoCollection} interface whose
 * write methods are the guarded collection's and whose other methods (reads, indexes, aggregations, change streams)
 * are the driver's. A {@code withX(...)} that returns another collection returns that collection's view, guarded the
 * same way. A write method of the interface the guarded collection does not have (a later driver's) is refused with a
 * message, never sent unguarded; {@code GuardedReactiveCollectionViewTest} checks that the driver this is built with
 * has none.
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

    /** Each write method of the interface, to the guarded collection's method of the same signature (or null). */
    private static final Map<Method, @Nullable Method> GUARDED = guardedMethods();

    private final GuardedReactiveCollection<?> guarded;
    private final MongoCollection<?> driver;

    private GuardedReactiveCollectionView(GuardedReactiveCollection<?> guarded, MongoCollection<?> driver) {
        this.guarded = guarded;
        this.driver = driver;
    }

    @SuppressWarnings("unchecked") // the proxy implements MongoCollection for the guarded collection's class
    static <T> MongoCollection<T> of(GuardedReactiveCollection<T> guarded, MongoCollection<T> driver) {
        return (MongoCollection<T>) Proxy.newProxyInstance(
                GuardedReactiveCollectionView.class.getClassLoader(),
                new Class<?>[] {MongoCollection.class},
                new GuardedReactiveCollectionView(guarded, driver));
    }

    private static Map<Method, @Nullable Method> guardedMethods() {
        Map<Method, @Nullable Method> methods = new HashMap<>();
        for (Method method : MongoCollection.class.getMethods()) {
            if (WRITES.contains(method.getName())) {
                Method own;
                try {
                    own = GuardedReactiveCollection.class.getMethod(method.getName(), method.getParameterTypes());
                } catch (NoSuchMethodException e) {
                    own = null;
                }
                methods.put(method, own);
            }
        }
        return methods;
    }

    /** {@return the interface's write methods the guarded collection lacks (none with the driver it is built with)} */
    static Set<Method> unguardedWrites() {
        Set<Method> missing = new java.util.HashSet<>();
        GUARDED.forEach((method, own) -> {
            if (own == null) {
                missing.add(method);
            }
        });
        return missing;
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
        if (GUARDED.containsKey(method)) {
            Method own = GUARDED.get(method);
            if (own == null) {
                throw new UnsupportedOperationException("the guard does not know the driver's write method " + method
                        + " (a driver newer than the guard's?); nothing was sent: use a method the guard knows, or"
                        + " unwrap() to send it unguarded");
            }
            return call(own, guarded, args);
        }
        Object result = call(method, driver, args);
        if (result instanceof MongoCollection<?> changed && method.getName().startsWith("with")) {
            return guarded.rewrap(changed).asMongoCollection();
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
