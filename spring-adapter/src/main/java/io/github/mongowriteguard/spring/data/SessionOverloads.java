package io.github.mongowriteguard.spring.data;

import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Method;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;
import org.jspecify.annotations.Nullable;

/**
 * Calls a driver method on a session, as Spring Data's {@code SessionAwareMethodInterceptor} does: a method of the
 * driver's {@code MongoCollection} or {@code MongoDatabase} (synchronous or reactive) that has a {@code ClientSession}
 * overload is called through it with the session; any other method as it is. Shared by {@link RoutedCollection} and
 * {@link GuardedReactiveDatabaseFactory}.
 */
final class SessionOverloads {
    /** The {@code ClientSession} overload of each method, if it has one. */
    private static final Map<Method, Optional<Method>> OVERLOADS = new ConcurrentHashMap<>();

    private SessionOverloads() {}

    /**
     * Calls {@code method} on {@code target}, through its session overload when {@code session} is given.
     *
     * @param sessionType the session class of the overloads ({@code ClientSession} of the driver of {@code method})
     */
    static @Nullable Object call(
            Object target, Method method, @Nullable Object[] args, @Nullable Object session, Class<?> sessionType)
            throws Throwable {
        Object[] arguments = args == null ? new Object[0] : args;
        Method toCall = method;
        if (session != null) {
            Optional<Method> overload = overload(method, sessionType);
            if (overload.isPresent()) {
                toCall = overload.get();
                Object[] withSession = new Object[arguments.length + 1];
                withSession[0] = session;
                System.arraycopy(arguments, 0, withSession, 1, arguments.length);
                arguments = withSession;
            }
        }
        try {
            return toCall.invoke(target, arguments);
        } catch (InvocationTargetException e) {
            throw e.getCause();
        }
    }

    /**
     * A proxy's {@code Object} method: identity equality and hash code, and {@code description} as its string.
     *
     * @return the method's result
     */
    static Object objectMethod(Object proxy, Method method, @Nullable Object[] args, String description) {
        return switch (method.getName()) {
            case "equals" -> args != null && proxy == args[0];
            case "hashCode" -> System.identityHashCode(proxy);
            default -> description;
        };
    }

    /** None when the method takes a session already (the caller's own) or has no session overload (withX, getters). */
    private static Optional<Method> overload(Method method, Class<?> sessionType) {
        return OVERLOADS.computeIfAbsent(method, m -> {
            Class<?>[] parameters = m.getParameterTypes();
            if (parameters.length > 0 && com.mongodb.session.ClientSession.class.isAssignableFrom(parameters[0])) {
                return Optional.empty();
            }
            Class<?>[] withSession = new Class<?>[parameters.length + 1];
            withSession[0] = sessionType;
            System.arraycopy(parameters, 0, withSession, 1, parameters.length);
            try {
                return Optional.of(m.getDeclaringClass().getMethod(m.getName(), withSession));
            } catch (NoSuchMethodException none) {
                return Optional.empty();
            }
        });
    }
}
