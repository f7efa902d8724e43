package io.github.mongowriteguard.spring.data;

import java.util.Objects;

import org.springframework.util.Assert;
import java.util.Optional;

import org.jspecify.annotations.Nullable;
import org.springframework.beans.BeansException;
import org.springframework.context.ApplicationContext;
import org.springframework.context.ApplicationEventPublisher;
import org.springframework.data.mapping.callback.EntityCallbacks;
import org.springframework.data.mongodb.MongoDatabaseFactory;
import org.springframework.data.mongodb.core.BulkOperations;
import org.springframework.data.mongodb.core.MongoTemplate;
import org.springframework.data.mongodb.core.convert.MongoConverter;
import org.springframework.data.mongodb.core.mapping.MongoPersistentEntity;

import com.mongodb.WriteConcern;
import com.mongodb.client.MongoClient;

import io.github.mongowriteguard.WriteGuard;

/**
 * A {@link MongoTemplate} whose {@code bulkOps(...)} run through a {@link WriteGuard}; everything else is the
 * template's own. Swap it in where the template is built and leave the call sites as they are:
 *
 * <pre>{@code
 * WriteGuard guard = WriteGuard.create(WriteGuardSettings.defaults());
 * MongoClient client = MongoClients.create(guard.configure(MongoClientSettings.builder()
 *     .applyConnectionString(new ConnectionString(uri))).build());
 * MongoTemplate template = new GuardedMongoTemplate(new SimpleMongoClientDatabaseFactory(client, "shop"), null, guard);
 * template.bulkOps(BulkMode.ORDERED, StoreInventory.class).replaceOne(query, item, options().upsert()).execute();
 * }</pre>
 *
 * <p>The guard must be the one {@link WriteGuard#configure configured} on the template's client (Spring Boot's
 * auto-configuration does both); otherwise the first {@code execute()} fails with the guard's message.
 * Bulks of a {@code withSession(...)} template are Spring's own, not guarded.
 */
public class GuardedMongoTemplate extends MongoTemplate {
    private final WriteGuard guard;
    private @Nullable ApplicationEventPublisher eventPublisher;
    private @Nullable EntityCallbacks entityCallbacks;
    private @Nullable WriteConcern writeConcern;
    private boolean lifecycleEvents = true;

    /**
     * A guarded template on a database factory, as Spring Boot builds it.
     *
     * @param databaseFactory the factory of the client the guard was {@link WriteGuard#configure configured} on
     * @param converter       the converter, or null for Spring Data's default
     * @param guard           the guard the bulks run through
     */
    public GuardedMongoTemplate(MongoDatabaseFactory databaseFactory, @Nullable MongoConverter converter, WriteGuard guard) {
        super(databaseFactory, converter);
        this.guard = Objects.requireNonNull(guard, "guard");
    }

    /**
     * A guarded template on a client and database name.
     *
     * @param client       a client built from settings the guard {@link WriteGuard#configure configured}
     * @param databaseName the database
     * @param guard        the guard the bulks run through
     */
    public GuardedMongoTemplate(MongoClient client, String databaseName, WriteGuard guard) {
        super(client, databaseName);
        this.guard = Objects.requireNonNull(guard, "guard");
    }

    /** {@return the guard the bulks run through} */
    public WriteGuard getWriteGuard() {
        return guard;
    }

    @Override
    public BulkOperations bulkOps(BulkOperations.BulkMode mode, String collectionName) {
        return guardedBulkOps(mode, null, collectionName);
    }

    @Override
    public BulkOperations bulkOps(BulkOperations.BulkMode mode, Class<?> entityClass) {
        return guardedBulkOps(mode, entityClass, getCollectionName(entityClass));
    }

    @Override
    public BulkOperations bulkOps(BulkOperations.BulkMode mode, @Nullable Class<?> entityType, String collectionName) {
        return guardedBulkOps(mode, entityType, collectionName);
    }

    private GuardedBulkOperations guardedBulkOps(BulkOperations.BulkMode mode, @Nullable Class<?> entityType, String collectionName) {
        Assert.notNull(mode, "BulkMode must not be null"); // an IllegalArgumentException, as Spring's own bulkOps throws
        Optional<? extends MongoPersistentEntity<?>> entity = entityType == null ? Optional.empty()
            : Optional.ofNullable(getConverter().getMappingContext().getPersistentEntity(entityType));
        return new GuardedBulkOperations(this, guard, collectionName, mode, entity,
            lifecycleEvents ? eventPublisher : null, entityCallbacks, writeConcern);
    }

    // The template keeps these private; the guarded bulks need the same ones Spring's bulks get.

    @Override
    public void setApplicationContext(ApplicationContext applicationContext) throws BeansException {
        super.setApplicationContext(applicationContext);
        this.eventPublisher = applicationContext;
        if (entityCallbacks == null) {
            this.entityCallbacks = EntityCallbacks.create(applicationContext);
        }
    }

    @Override
    public void setEntityCallbacks(EntityCallbacks entityCallbacks) {
        super.setEntityCallbacks(entityCallbacks);
        this.entityCallbacks = entityCallbacks;
    }

    @Override
    public void setEntityLifecycleEventsEnabled(boolean enabled) {
        super.setEntityLifecycleEventsEnabled(enabled);
        this.lifecycleEvents = enabled;
    }

    @Override
    public void setWriteConcern(@Nullable WriteConcern writeConcern) {
        super.setWriteConcern(writeConcern);
        this.writeConcern = writeConcern;
    }
}
