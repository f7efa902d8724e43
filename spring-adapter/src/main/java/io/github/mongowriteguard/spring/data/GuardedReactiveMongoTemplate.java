package io.github.mongowriteguard.spring.data;

import com.mongodb.reactivestreams.client.MongoClient;
import com.mongodb.reactivestreams.client.MongoDatabase;
import io.github.mongowriteguard.GuardedReactiveCollection;
import io.github.mongowriteguard.WriteGuard;
import java.util.Collection;
import java.util.EnumSet;
import java.util.Objects;
import java.util.Set;
import org.jspecify.annotations.Nullable;
import org.springframework.data.mongodb.ReactiveMongoDatabaseFactory;
import org.springframework.data.mongodb.core.ReactiveMongoTemplate;
import org.springframework.data.mongodb.core.SimpleReactiveMongoDatabaseFactory;
import org.springframework.data.mongodb.core.convert.MongoConverter;

/**
 * A {@link ReactiveMongoTemplate} whose every write goes through a {@link WriteGuard} (the guard for the Reactive
 * Streams driver, {@link GuardedReactiveCollection#of}), with Spring Data's own mapping, lifecycle events, entity
 * callbacks, {@code @Version} checks and exception translation. Swap it in where the template is built:
 *
 * <pre>{@code
 * WriteGuard guard = WriteGuard.create();
 * MongoClient client = MongoClients.create(guard.configure(MongoClientSettings.builder()      // reactivestreams.client
 *     .applyConnectionString(new ConnectionString(uri))).build());
 * ReactiveMongoTemplate template = new GuardedReactiveMongoTemplate(client, "shop", guard);
 * template.bulkOps(BulkMode.ORDERED, StoreInventory.class).upsert(query, update).execute();   // guarded
 * }</pre>
 *
 * <p>How: the template runs on a wrapper of the given database factory whose databases hand out the guard's
 * {@code asMongoCollection()} views (guarded write methods, the driver's reads), and which binds sessions itself, so
 * that a {@code withSession(...)} template and a {@code ReactiveMongoTransactionManager} transaction write on the
 * caller's session (inside a multi-document transaction, the driver's own call). Every template write, repository
 * writes and {@code bulkOps(...)} (Spring's {@code DefaultReactiveBulkOperations}, whose {@code bulkWrite} is the
 * guard's) go through it.
 *
 * <p>Not guarded (the driver as it is, as in Spring): {@code getCollection(...)} and {@code getMongoDatabase()} (the
 * application's factory's), server-side writes such as {@code $out} or {@code $merge} aggregations.
 *
 * <p>The guard must be the one {@link WriteGuard#configure configured} on the template's client (Spring Boot's
 * auto-configuration does both); otherwise the first write fails with the guard's message.
 */
public class GuardedReactiveMongoTemplate extends ReactiveMongoTemplate {
    private final GuardedReactiveDatabaseFactory factory;
    private final ReactiveMongoDatabaseFactory applicationFactory;

    /**
     * A guarded template on a database factory, as Spring Boot builds it.
     *
     * @param databaseFactory the factory of {@code client}
     * @param converter       the converter, or null for Spring Data's default
     * @param guard           the guard the writes run through
     * @param client          the reactive client behind {@code databaseFactory}, built from a builder the guard
     *                        {@link WriteGuard#configure configured}
     */
    public GuardedReactiveMongoTemplate(
            ReactiveMongoDatabaseFactory databaseFactory,
            @Nullable MongoConverter converter,
            WriteGuard guard,
            MongoClient client) {
        this(new GuardedReactiveDatabaseFactory(databaseFactory, guard, client), databaseFactory, converter);
    }

    /**
     * As {@code ReactiveMongoTemplate(MongoClient, String)}, which builds a {@link SimpleReactiveMongoDatabaseFactory}
     * the same way.
     *
     * @param client       the reactive client the guard was {@link WriteGuard#configure configured} on
     * @param databaseName the database's name
     * @param guard        the guard the writes run through
     */
    public GuardedReactiveMongoTemplate(MongoClient client, String databaseName, WriteGuard guard) {
        this(new SimpleReactiveMongoDatabaseFactory(client, databaseName), null, guard, client);
    }

    private GuardedReactiveMongoTemplate(
            GuardedReactiveDatabaseFactory factory,
            ReactiveMongoDatabaseFactory applicationFactory,
            @Nullable MongoConverter converter) {
        super(factory, converter);
        this.factory = factory;
        this.applicationFactory = applicationFactory;
    }

    /**
     * The guard the writes run through.
     *
     * @return the guard
     */
    public WriteGuard getWriteGuard() {
        return factory.guard();
    }

    /**
     * Sends the writes of these groups to the driver as Spring Data's {@code ReactiveMongoTemplate} does (no guard);
     * the other groups go through the guard. Applies to this template and to its {@code withSession(...)} templates.
     *
     * @param groups the groups whose writes go to the driver
     */
    public void setPlainGroups(Collection<TemplateWriteGroup> groups) {
        factory.setPlainGroups(Objects.requireNonNull(groups, "groups"));
    }

    /**
     * The groups sent to the driver as Spring does; empty by default.
     *
     * @return the groups sent to the driver
     */
    public Set<TemplateWriteGroup> getPlainGroups() {
        return factory.plainGroups();
    }

    /**
     * Checks now, without contacting the server, what this template's first guarded write would check: that its guard
     * {@link WriteGuard#configure configured} the template's client, that the client has no Client-Side Operation
     * Timeout and that the guard's server deadline fits below the client's socket read timeout. Spring Boot's
     * auto-configuration calls it at startup. Does nothing when every group of writes is plain.
     *
     * @throws IllegalStateException    with the guard's message when its first write would fail
     * @throws IllegalArgumentException with the guard's message when its first write would fail
     */
    public void checkGuardable() {
        if (factory.plainGroups().containsAll(EnumSet.allOf(TemplateWriteGroup.class))) {
            return;
        }
        MongoDatabase database = Objects.requireNonNull(
                applicationFactory.getMongoDatabase().block(), "the database factory gave no database");
        GuardedReactiveCollection.of(
                factory.guard(), factory.client(), database.getCollection("mongo-write-guard-check"));
    }
}
