package io.github.mongowriteguard.spring.data;

import com.mongodb.client.MongoClient;
import com.mongodb.client.MongoCollection;
import io.github.mongowriteguard.WriteGuard;
import java.util.Collection;
import java.util.EnumSet;
import java.util.Objects;
import java.util.Set;
import org.bson.Document;
import org.jspecify.annotations.Nullable;
import org.springframework.data.mongodb.MongoDatabaseFactory;
import org.springframework.data.mongodb.core.MongoTemplate;
import org.springframework.data.mongodb.core.SimpleMongoClientDatabaseFactory;
import org.springframework.data.mongodb.core.convert.MongoConverter;

/**
 * A {@link MongoTemplate} whose every write goes through a {@link WriteGuard}, with Spring Data's own mapping,
 * lifecycle events, entity callbacks, {@code @Version} optimistic locking and exception translation. Swap it in where
 * the template is built and leave the call sites as they are:
 *
 * <pre>{@code
 * WriteGuard guard = WriteGuard.create(WriteGuardSettings.defaults());
 * MongoClient client = MongoClients.create(guard.configure(MongoClientSettings.builder()
 *     .applyConnectionString(new ConnectionString(uri))).build());
 * MongoTemplate template = new GuardedMongoTemplate(new SimpleMongoClientDatabaseFactory(client, "shop"), null, guard);
 * template.save(order);                                                   // guarded: server deadline, same-copy retries
 * template.bulkOps(BulkMode.ORDERED, StoreInventory.class).replaceOne(query, item, options().upsert()).execute();
 * }</pre>
 *
 * <p>How: Spring Data MongoDB 5.0's template obtains every collection it reads or writes through
 * {@code getAndPrepareCollection(db, name)}, which calls {@link #prepareCollection(MongoCollection)}
 * (spring-data-mongodb tag 5.0.5, {@code core/MongoTemplate.java}; the 5.0.6 jar this project builds with has the
 * same methods, checked with javap: {@code execute(String, CollectionCallback)} for
 * insert, save, update, remove and replace, {@code executeFindOneInternal} for findAndModify, findAndReplace and
 * findAndRemove). This template returns the collection routed through the guard there: the driver's write methods
 * ({@link TemplateWriteGroup}) go to the guard's {@code asMongoCollection()} view, everything else to the driver's
 * collection. Spring's code above it is unchanged, so the same documents, events, callbacks, version checks
 * ({@code OptimisticLockingFailureException} when a versioned {@code save} modified nothing) and translated exceptions
 * follow. {@code bulkOps(...)} is Spring Data's own, whose {@code bulkWrite} reaches the guard the same way.
 *
 * <p>Sessions: {@code withSession(...)} and {@code MongoTransactionManager} transactions bind the session through this
 * template's database factory ({@link #getMongoDatabaseFactory()} is a wrapper of the given factory, which Spring's
 * transaction synchronization treats as the given one), so the guard writes on the caller's session; inside a
 * multi-document transaction the write is the driver's own call on that session.
 *
 * <p>Not guarded (the driver as it is, as in Spring): {@code getCollection(...)}, {@code getDb()} and
 * {@code execute(DbCallback)} outside a transaction, and server-side writes such as aggregations with {@code $out} or
 * {@code $merge}. {@code execute(collectionName, CollectionCallback)} hands the callback the guarded collection.
 *
 * <p>The guard must be the one {@link WriteGuard#configure configured} on the template's client (Spring Boot's
 * auto-configuration does both); otherwise the first write fails with the guard's message. One guard may configure
 * several clients: each template finds its own client behind its database factory (Spring's
 * {@code SimpleMongoClientDatabaseFactory}, as Spring Boot and {@code MongoTemplate(MongoClient, String)} build it),
 * or is given it ({@link #GuardedMongoTemplate(MongoDatabaseFactory, MongoConverter, WriteGuard, MongoClient)}).
 */
public class GuardedMongoTemplate extends MongoTemplate {
    private final GuardedDatabaseFactory factory;

    /**
     * A guarded template on a database factory, as Spring Boot builds it.
     *
     * @param databaseFactory the factory of the client the guard was {@link WriteGuard#configure configured} on
     * @param converter       the converter, or null for Spring Data's default
     * @param guard           the guard the bulks run through
     */
    public GuardedMongoTemplate(
            MongoDatabaseFactory databaseFactory, @Nullable MongoConverter converter, WriteGuard guard) {
        this(new GuardedDatabaseFactory(databaseFactory, guard, null), converter);
    }

    /**
     * A guarded template on a database factory whose client is named: for a factory of your own that is not Spring's
     * {@code SimpleMongoClientDatabaseFactory} (whose client the template finds itself), when the guard configured
     * several clients.
     *
     * @param databaseFactory the factory of {@code client}
     * @param converter       the converter, or null for Spring Data's default
     * @param guard           the guard the writes run through
     * @param client          the client behind {@code databaseFactory}, built from a builder the guard
     *                        {@link WriteGuard#configure configured}
     */
    public GuardedMongoTemplate(
            MongoDatabaseFactory databaseFactory,
            @Nullable MongoConverter converter,
            WriteGuard guard,
            MongoClient client) {
        this(new GuardedDatabaseFactory(databaseFactory, guard, Objects.requireNonNull(client, "client")), converter);
    }

    /**
     * As {@code MongoTemplate(MongoClient, String)}, which builds a {@link SimpleMongoClientDatabaseFactory} the same way.
     *
     * @param client       the client the guard was {@link WriteGuard#configure configured} on
     * @param databaseName the database's name
     * @param guard        the guard the bulks run through
     */
    public GuardedMongoTemplate(MongoClient client, String databaseName, WriteGuard guard) {
        this(new SimpleMongoClientDatabaseFactory(client, databaseName), null, guard, client);
    }

    private GuardedMongoTemplate(GuardedDatabaseFactory factory, @Nullable MongoConverter converter) {
        super(factory, converter);
        this.factory = factory;
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
     * Checks now, without contacting the server, what this template's first guarded write would check: that its guard
     * {@link WriteGuard#configure configured} the template's client (and only that one), that the client has no
     * Client-Side Operation Timeout and that the guard's server deadline fits below the client's socket read timeout.
     * Spring Boot's auto-configuration calls it at startup. Does nothing when every group of writes is plain.
     *
     * @throws IllegalStateException    with the guard's message when its first write would fail
     * @throws IllegalArgumentException with the guard's message when its first write would fail
     */
    public void checkGuardable() {
        if (factory.plainGroups().containsAll(EnumSet.allOf(TemplateWriteGroup.class))) {
            return;
        }
        factory.guard()
                .guardCollection(factory.access(), factory.getMongoDatabase().getCollection("mongo-write-guard-check"));
    }

    /**
     * Sends the writes of these groups to the driver as Spring Data's {@code MongoTemplate} does (no guard); the other
     * groups go through the guard. Applies to this template and to its {@code withSession(...)} templates.
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
     * The collection as Spring prepares it (the template's read preference), routed through the guard. A collection of
     * a session-bound database of this template's factory is routed on that session already and is returned as is.
     */
    @Override
    protected MongoCollection<Document> prepareCollection(MongoCollection<Document> collection) {
        return factory.route(super.prepareCollection(collection), null);
    }
}
