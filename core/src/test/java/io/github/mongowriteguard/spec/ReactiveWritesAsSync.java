package io.github.mongowriteguard.spec;

import com.mongodb.client.ClientSession;
import com.mongodb.client.MongoCollection;
import java.lang.reflect.InvocationHandler;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Method;
import java.lang.reflect.Proxy;
import java.util.concurrent.TimeUnit;
import org.bson.BsonDocument;
import org.opentest4j.TestAbortedException;
import org.reactivestreams.Publisher;
import reactor.core.publisher.Mono;

/**
 * The spec runner's synchronous {@code MongoCollection} whose write methods call a reactive collection (the reactive
 * guard's {@code asMongoCollection()}) with the same arguments and await its publisher's one signal: the result, null
 * for an empty publisher ({@code findOneAndX} finding nothing), or the error, rethrown as it was signalled. Everything
 * else (reads, indexes) is the synchronous driver's collection of the same namespace and options; a {@code withX(...)}
 * changes both. A write with a session is skipped: the runner's sessions are the synchronous driver's.
 */
final class ReactiveWritesAsSync implements InvocationHandler {
    private final MongoCollection<BsonDocument> sync;
    private final com.mongodb.reactivestreams.client.MongoCollection<BsonDocument> reactive;

    private ReactiveWritesAsSync(
            MongoCollection<BsonDocument> sync,
            com.mongodb.reactivestreams.client.MongoCollection<BsonDocument> reactive) {
        this.sync = sync;
        this.reactive = reactive;
    }

    @SuppressWarnings("unchecked") // the proxy implements MongoCollection<BsonDocument>
    static MongoCollection<BsonDocument> of(
            MongoCollection<BsonDocument> sync,
            com.mongodb.reactivestreams.client.MongoCollection<BsonDocument> reactive) {
        return (MongoCollection<BsonDocument>) Proxy.newProxyInstance(
                ReactiveWritesAsSync.class.getClassLoader(),
                new Class<?>[] {MongoCollection.class},
                new ReactiveWritesAsSync(sync, reactive));
    }

    @Override
    @SuppressWarnings("unchecked") // withX(...) of a BsonDocument collection, as the runner calls them
    public Object invoke(Object proxy, Method method, Object[] args) throws Throwable {
        if (GuardSpecCases.WRITES.contains(method.getName())) {
            if (args != null && args.length > 0 && args[0] instanceof ClientSession) {
                throw new TestAbortedException("a write on a session through the reactive guard (the runner's session"
                        + " entities are the synchronous driver's)");
            }
            Method own = com.mongodb.reactivestreams.client.MongoCollection.class.getMethod(
                    method.getName(), method.getParameterTypes());
            Publisher<?> publisher = (Publisher<?>) call(own, reactive, args);
            return Mono.from(publisher).block();
        }
        if (method.getName().startsWith("with") && method.getReturnType() == MongoCollection.class) {
            Method own = com.mongodb.reactivestreams.client.MongoCollection.class.getMethod(
                    method.getName(), method.getParameterTypes());
            return of(
                    (MongoCollection<BsonDocument>) call(method, sync, args),
                    (com.mongodb.reactivestreams.client.MongoCollection<BsonDocument>) call(own, reactive, args));
        }
        return call(method, sync, args);
    }

    /** {@code collection}'s reactive twin: same namespace, concerns, read preference and timeout. */
    static com.mongodb.reactivestreams.client.MongoCollection<BsonDocument> twin(
            com.mongodb.reactivestreams.client.MongoClient client, MongoCollection<BsonDocument> collection) {
        var twin = client.getDatabase(collection.getNamespace().getDatabaseName())
                .getCollection(collection.getNamespace().getCollectionName(), BsonDocument.class)
                .withWriteConcern(collection.getWriteConcern())
                .withReadConcern(collection.getReadConcern())
                .withReadPreference(collection.getReadPreference());
        Long timeout = collection.getTimeout(TimeUnit.MILLISECONDS);
        return timeout == null ? twin : twin.withTimeout(timeout, TimeUnit.MILLISECONDS);
    }

    private static Object call(Method method, Object target, Object[] args) throws Throwable {
        try {
            return method.invoke(target, args);
        } catch (InvocationTargetException e) {
            throw e.getCause();
        }
    }
}
