package io.github.mongowriteguard;

import static org.assertj.core.api.Assertions.assertThat;

import com.mongodb.ConnectionString;
import com.mongodb.MongoClientSettings;
import com.mongodb.RequestContext;
import com.mongodb.WriteConcern;
import com.mongodb.client.model.BulkWriteOptions;
import com.mongodb.client.model.InsertOneModel;
import com.mongodb.event.CommandListener;
import com.mongodb.event.CommandStartedEvent;
import com.mongodb.reactivestreams.client.MongoClient;
import com.mongodb.reactivestreams.client.MongoClients;
import com.mongodb.reactivestreams.client.MongoCollection;
import com.mongodb.reactivestreams.client.ReactiveContextProvider;
import io.github.mongowriteguard.outcome.WriteOutcome;
import io.github.mongowriteguard.outcome.WriteStatus;
import io.github.mongowriteguard.retry.RetryPolicy;
import io.github.mongowriteguard.testkit.EmulatedCluster;
import io.github.mongowriteguard.testkit.EmulatedReplicaSet;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import org.bson.Document;
import org.junit.jupiter.api.Test;
import org.reactivestreams.Subscriber;
import reactor.core.CoreSubscriber;
import reactor.core.publisher.Mono;
import reactor.util.context.Context;

/**
 * The subscriber's Reactor {@code Context} and the driver's {@link ReactiveContextProvider}: the reactive driver asks
 * its provider for a {@link RequestContext} with the subscriber of each operation's publisher (a Reactor
 * {@link CoreSubscriber} carries the subscriber's {@code Context}), and hands that request context to the command
 * listeners, so a tracing or tenant value written with {@code contextWrite} reaches each command's event. The
 * driver's own write shows it (the control); the guard subscribes to every driver publisher of a call with the
 * subscriber's context, so a guarded write's commands (its resends, and a settle's with the settle's subscriber's
 * context) carry it as the driver's own do.
 */
class ReactiveSubscriberContextTest {
    private static final String KEY = "tenant";

    /** The provider an application would write: the subscriber's Reactor Context as the request context. */
    private static final class ReactorContextProvider implements ReactiveContextProvider {
        @Override
        public RequestContext getContext(Subscriber<?> subscriber) {
            Context context = subscriber instanceof CoreSubscriber<?> core ? core.currentContext() : Context.empty();
            return new ReactorRequestContext(context);
        }
    }

    /** A read-only request context over a Reactor Context. */
    private record ReactorRequestContext(Context context) implements RequestContext {
        @Override
        public <T> T get(Object key) {
            return context.get(key);
        }

        @Override
        public boolean hasKey(Object key) {
            return context.hasKey(key);
        }

        @Override
        public boolean isEmpty() {
            return context.isEmpty();
        }

        @Override
        public void put(Object key, Object value) {
            throw new UnsupportedOperationException("read-only");
        }

        @Override
        public void delete(Object key) {
            throw new UnsupportedOperationException("read-only");
        }

        @Override
        public int size() {
            return context.size();
        }

        @Override
        public Stream<Map.Entry<Object, Object>> stream() {
            return context.stream();
        }
    }

    /** The tenant each write command's event carried, by collection (null: none). */
    private static final class Tenants implements CommandListener {
        final Map<String, List<Object>> seen = new ConcurrentHashMap<>();

        @Override
        public void commandStarted(CommandStartedEvent event) {
            if (event.getCommandName().equals("insert")) {
                RequestContext context = event.getRequestContext();
                Object tenant = context != null && context.hasKey(KEY) ? context.get(KEY) : "none";
                seen.computeIfAbsent(
                                event.getCommand().getString("insert").getValue(), name -> new CopyOnWriteArrayList<>())
                        .add(tenant);
            }
        }
    }

    private static MongoClient client(WriteGuard guard, String uri, Tenants tenants) {
        return MongoClients.create(guard.configure(MongoClientSettings.builder()
                        .applyConnectionString(new ConnectionString(uri))
                        .applyToClusterSettings(c -> c.serverSelectionTimeout(10, TimeUnit.SECONDS))
                        .contextProvider(new ReactorContextProvider())
                        .addCommandListener(tenants))
                .build());
    }

    @Test
    void theDriversOwnWrite_carriesTheSubscribersContextToItsCommand() {
        try (EmulatedReplicaSet cluster = EmulatedCluster.replicaSet().start()) {
            Tenants tenants = new Tenants();
            WriteGuard guard = WriteGuard.create();
            try (MongoClient client = client(guard, cluster.connectionString(), tenants)) {
                MongoCollection<Document> plain = client.getDatabase("shop").getCollection("plain");

                Mono.from(plain.insertOne(new Document("_id", 1)))
                        .contextWrite(Context.of(KEY, "t-1"))
                        .block();

                assertThat(tenants.seen.get("plain")).containsExactly("t-1");
            }
        }
    }

    @Test
    void aGuardedWrite_carriesTheSubscribersContextToItsCommand_asTheDriversOwn() {
        try (EmulatedReplicaSet cluster = EmulatedCluster.replicaSet().start()) {
            Tenants tenants = new Tenants();
            WriteGuard guard = WriteGuard.create();
            try (MongoClient client = client(guard, cluster.connectionString(), tenants)) {
                GuardedReactiveCollection<Document> guarded = GuardedReactiveCollection.of(
                        guard, client, client.getDatabase("shop").getCollection("guarded"));

                Mono.from(guarded.insertOne(new Document("_id", 1)))
                        .contextWrite(Context.of(KEY, "t-1"))
                        .block();
                Mono.from(guarded.insertOne(new Document("_id", 2))).block();

                assertThat(tenants.seen.get("guarded")).containsExactly("t-1", "none");
            }
        }
    }

    @Test
    void aWriteThroughTheMongoCollectionView_carriesTheSubscribersContext() {
        try (EmulatedReplicaSet cluster = EmulatedCluster.replicaSet().start()) {
            Tenants tenants = new Tenants();
            WriteGuard guard = WriteGuard.create();
            try (MongoClient client = client(guard, cluster.connectionString(), tenants)) {
                MongoCollection<Document> view = GuardedReactiveCollection.of(
                                guard, client, client.getDatabase("shop").getCollection("view"))
                        .asMongoCollection();

                Mono.from(view.insertOne(new Document("_id", 1)))
                        .contextWrite(Context.of(KEY, "t-1"))
                        .block();
                Mono.from(view.withWriteConcern(WriteConcern.MAJORITY)
                                .bulkWrite(List.of(new InsertOneModel<>(new Document("_id", 2)))))
                        .contextWrite(Context.of(KEY, "t-2"))
                        .block();

                assertThat(tenants.seen.get("view")).containsExactly("t-1", "t-2");
            }
        }
    }

    /**
     * A bulk whose replies are lost: the guard's resend of the same copy carries the call's subscriber context, and a
     * settle's resend the settle's subscriber's, as a command of the settle's own would.
     */
    @Test
    void aLostReply_theResendCarriesTheCallsContext_andTheSettleItsOwn() {
        try (EmulatedReplicaSet cluster = EmulatedCluster.replicaSet().start()) {
            Tenants tenants = new Tenants();
            WriteGuard guard = WriteGuard.create(WriteGuardSettings.builder()
                    .retryPolicy(RetryPolicy.builder()
                            .maxAttempts(2)
                            .initialBackoff(Duration.ofMillis(20))
                            .build())
                    .build());
            try (MongoClient client = client(guard, cluster.connectionString(), tenants)) {
                GuardedReactiveCollection<Document> guarded = GuardedReactiveCollection.of(
                        guard, client, client.getDatabase("shop").getCollection("lost"));
                cluster.primary().loseReplies(2, "insert");

                WriteOutcome<Document> outcome = Mono.from(guarded.execute(
                                List.of(new InsertOneModel<>(new Document("_id", 1))), new BulkWriteOptions()))
                        .contextWrite(Context.of(KEY, "t-call"))
                        .block();
                assertThat(outcome.outcome(0).status())
                        .as(outcome.outcome(0).toString())
                        .isEqualTo(WriteStatus.UNKNOWN);
                assertThat(outcome.outcome(0).settleable()).isTrue();

                WriteOutcome<Document> settled = Mono.from(guarded.settle(outcome))
                        .contextWrite(Context.of(KEY, "t-settle"))
                        .block();

                assertThat(settled.outcome(0).status()).isEqualTo(WriteStatus.APPLIED);
                assertThat(tenants.seen.get("lost")).containsExactly("t-call", "t-call", "t-settle");
            }
        }
    }
}
