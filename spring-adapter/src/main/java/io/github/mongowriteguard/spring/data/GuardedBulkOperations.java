package io.github.mongowriteguard.spring.data;

import com.mongodb.MongoBulkWriteException;
import com.mongodb.WriteConcern;
import com.mongodb.bulk.BulkWriteResult;
import com.mongodb.client.MongoCollection;
import com.mongodb.client.model.BulkWriteOptions;
import com.mongodb.client.model.DeleteManyModel;
import com.mongodb.client.model.DeleteOptions;
import com.mongodb.client.model.InsertOneModel;
import com.mongodb.client.model.ReplaceOneModel;
import com.mongodb.client.model.ReplaceOptions;
import com.mongodb.client.model.UpdateManyModel;
import com.mongodb.client.model.UpdateOneModel;
import com.mongodb.client.model.UpdateOptions;
import com.mongodb.client.model.WriteModel;
import io.github.mongowriteguard.MongoAccess;
import io.github.mongowriteguard.WriteGuard;
import io.github.mongowriteguard.exception.GuardedBulkWriteException;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.Optional;
import org.bson.Document;
import org.bson.conversions.Bson;
import org.jspecify.annotations.Nullable;
import org.springframework.aop.support.AopUtils;
import org.springframework.context.ApplicationEvent;
import org.springframework.context.ApplicationEventPublisher;
import org.springframework.dao.DataIntegrityViolationException;
import org.springframework.data.mapping.callback.EntityCallback;
import org.springframework.data.mapping.callback.EntityCallbacks;
import org.springframework.data.mongodb.BulkOperationException;
import org.springframework.data.mongodb.core.BulkOperations;
import org.springframework.data.mongodb.core.FindAndReplaceOptions;
import org.springframework.data.mongodb.core.MongoTemplate;
import org.springframework.data.mongodb.core.aggregation.AggregationUpdate;
import org.springframework.data.mongodb.core.aggregation.RelaxedTypeBasedAggregationOperationContext;
import org.springframework.data.mongodb.core.convert.QueryMapper;
import org.springframework.data.mongodb.core.convert.UpdateMapper;
import org.springframework.data.mongodb.core.mapping.MongoPersistentEntity;
import org.springframework.data.mongodb.core.mapping.event.AfterSaveCallback;
import org.springframework.data.mongodb.core.mapping.event.AfterSaveEvent;
import org.springframework.data.mongodb.core.mapping.event.BeforeConvertCallback;
import org.springframework.data.mongodb.core.mapping.event.BeforeConvertEvent;
import org.springframework.data.mongodb.core.mapping.event.BeforeSaveCallback;
import org.springframework.data.mongodb.core.mapping.event.BeforeSaveEvent;
import org.springframework.data.mongodb.core.query.Collation;
import org.springframework.data.mongodb.core.query.Query;
import org.springframework.data.mongodb.core.query.Update;
import org.springframework.data.mongodb.core.query.UpdateDefinition;
import org.springframework.data.util.Pair;

/**
 * Spring Data's {@link BulkOperations}, run through a {@link WriteGuard}: the same mapping as Spring's own
 * implementation (the template's converter, {@code @Id} and field names, {@code @Document} collection naming,
 * {@link QueryMapper}/{@link UpdateMapper}), the same lifecycle events and entity callbacks, the same results and
 * exceptions; but the bulk runs as the guard plans it (an ORDERED bulk of distinct keys is one unordered round, not
 * one mongos-to-shard round trip per shard change), with a server deadline on every write, {@code _id}s assigned
 * before the first send, and retries that never run two server copies of one write.
 *
 * <p>Get one from {@link GuardedMongoTemplate#bulkOps}; call sites stay as they are:
 * <pre>{@code
 * template.bulkOps(BulkMode.ORDERED, StoreInventory.class)
 *     .replaceOne(query(where("_id").is(item.id())), item, FindAndReplaceOptions.options().upsert())
 *     .execute();
 * }</pre>
 *
 * <p>Errors keep Spring's contract: write errors are a {@link BulkOperationException} whose
 * {@link BulkOperationException#getErrors() errors} carry the index each write had in this bulk (its cause is the
 * core's {@link GuardedBulkWriteException}, whose {@code outcome()} says what became of every write); a write-concern
 * error is a {@link DataIntegrityViolationException}, as in Spring; the guard's other exceptions (deadline exceeded,
 * outcome unknown, copy still running) and driver exceptions go through the template's exception translator, with
 * the guard's exception as the cause.
 *
 * <p>Like Spring's implementation, an instance is not thread-safe, and {@link #execute()} does not clear the writes
 * added so far.
 */
public class GuardedBulkOperations implements BulkOperations {
    private final MongoTemplate template;
    private final WriteGuard guard;
    private final MongoAccess access;
    private final String collectionName;
    private final BulkMode mode;
    private final Optional<? extends MongoPersistentEntity<?>> entity;
    private final QueryMapper queryMapper;
    private final UpdateMapper updateMapper;
    private final @Nullable ApplicationEventPublisher eventPublisher;
    private final @Nullable EntityCallbacks entityCallbacks;
    private final @Nullable WriteConcern writeConcern;
    private final List<SourceAndModel> models = new ArrayList<>();

    /**
     * @param template        supplies the converter, the collection (prepared as the template prepares it), the
     *                        exception translator and the database factory (sessions and databases for the guard)
     * @param guard           a guard whose {@link WriteGuard#configure} was applied to the template's client
     * @param collectionName  the collection
     * @param mode            ORDERED or UNORDERED, as in Spring Data
     * @param entity          the mapped entity of the bulk, if any (field names, {@code @Id})
     * @param eventPublisher  where lifecycle events go; null for none
     * @param entityCallbacks entity callbacks; null for none
     * @param writeConcern    the template's default write concern; null for the collection's
     */
    public GuardedBulkOperations(
            MongoTemplate template,
            WriteGuard guard,
            String collectionName,
            BulkMode mode,
            Optional<? extends MongoPersistentEntity<?>> entity,
            @Nullable ApplicationEventPublisher eventPublisher,
            @Nullable EntityCallbacks entityCallbacks,
            @Nullable WriteConcern writeConcern) {
        this.template = Objects.requireNonNull(template, "template");
        this.guard = Objects.requireNonNull(guard, "guard");
        if (collectionName == null || collectionName.isBlank()) {
            throw new IllegalArgumentException("CollectionName must not be null nor empty");
        }
        this.collectionName = collectionName;
        this.mode = Objects.requireNonNull(mode, "mode");
        this.entity = Objects.requireNonNull(entity, "entity");
        this.queryMapper = new QueryMapper(template.getConverter());
        this.updateMapper = new UpdateMapper(template.getConverter());
        this.eventPublisher = eventPublisher;
        this.entityCallbacks = entityCallbacks;
        this.writeConcern = writeConcern;
        this.access = new FactoryAccess(template);
    }

    @Override
    public BulkOperations insert(Object document) {
        Objects.requireNonNull(document, "Document must not be null");
        publish(new BeforeConvertEvent<>(document, collectionName));
        Object source = callback(BeforeConvertCallback.class, document, null);
        add(source, new InsertOneModel<>(toDocument(source)));
        return this;
    }

    @Override
    public BulkOperations insert(List<? extends Object> documents) {
        Objects.requireNonNull(documents, "Documents must not be null");
        documents.forEach(this::insert);
        return this;
    }

    @Override
    public BulkOperations updateOne(Query query, UpdateDefinition update) {
        return update(query, update, false, false);
    }

    @Override
    public BulkOperations updateOne(List<Pair<Query, UpdateDefinition>> updates) {
        Objects.requireNonNull(updates, "Updates must not be null");
        updates.forEach(pair -> update(pair.getFirst(), pair.getSecond(), false, false));
        return this;
    }

    @Override
    public BulkOperations updateMulti(Query query, UpdateDefinition update) {
        return update(query, update, false, true);
    }

    @Override
    public BulkOperations updateMulti(List<Pair<Query, UpdateDefinition>> updates) {
        Objects.requireNonNull(updates, "Updates must not be null");
        updates.forEach(pair -> update(pair.getFirst(), pair.getSecond(), false, true));
        return this;
    }

    /**
     * As in Spring Data: an upsert is a multi-document update with {@code upsert: true}. When its query pins
     * {@code _id} (the usual {@code query(where("_id").is(id))}) the guard keys it and sends it as a single-document
     * upsert, retried as the same copy (README, differences table).
     */
    @Override
    public BulkOperations upsert(Query query, UpdateDefinition update) {
        return update(query, update, true, true);
    }

    @Override
    public BulkOperations upsert(List<Pair<Query, Update>> updates) {
        Objects.requireNonNull(updates, "Updates must not be null");
        updates.forEach(pair -> upsert(pair.getFirst(), pair.getSecond()));
        return this;
    }

    /** As in Spring Data: a remove deletes every matching document ({@code limit: 0}), so the guard never resends it. */
    @Override
    public BulkOperations remove(Query query) {
        Objects.requireNonNull(query, "Query must not be null");
        DeleteOptions options = new DeleteOptions();
        query.getCollation().map(Collation::toMongoCollation).ifPresent(options::collation);
        add(query, new DeleteManyModel<>(query.getQueryObject(), options));
        return this;
    }

    @Override
    public BulkOperations remove(List<Query> removes) {
        Objects.requireNonNull(removes, "Removals must not be null");
        removes.forEach(this::remove);
        return this;
    }

    @Override
    public BulkOperations replaceOne(Query query, Object replacement, FindAndReplaceOptions options) {
        Objects.requireNonNull(query, "Query must not be null");
        Objects.requireNonNull(replacement, "Replacement must not be null");
        Objects.requireNonNull(options, "Options must not be null");
        ReplaceOptions replaceOptions = new ReplaceOptions().upsert(options.isUpsert());
        if (query.isSorted()) {
            replaceOptions.sort(query.getSortObject());
        }
        query.getCollation().map(Collation::toMongoCollation).ifPresent(replaceOptions::collation);
        publish(new BeforeConvertEvent<>(replacement, collectionName));
        Object source = callback(BeforeConvertCallback.class, replacement, null);
        add(source, new ReplaceOneModel<>(query.getQueryObject(), toDocument(source), replaceOptions));
        return this;
    }

    /**
     * Runs the writes added so far through the guard, then publishes {@link AfterSaveEvent}s and invokes
     * {@link AfterSaveCallback}s for inserts and replacements, as Spring does.
     *
     * @throws BulkOperationException            when writes failed (indices are this bulk's)
     * @throws DataIntegrityViolationException   on a write-concern error
     * @throws org.springframework.dao.DataAccessException the template's translation of anything else, e.g. the
     *                                           guard's {@code WriteOutcomeUnknownException} as its cause
     */
    @Override
    public BulkWriteResult execute() {
        BulkWriteResult result = template.execute(collectionName, this::bulkWriteTo);
        if (result == null) {
            throw new IllegalStateException("Result must not be null");
        }
        models.forEach(holder -> afterSave(holder));
        return result;
    }

    private BulkWriteResult bulkWriteTo(MongoCollection<Document> collection) {
        MongoCollection<Document> target =
                writeConcern == null ? collection : collection.withWriteConcern(writeConcern);
        List<WriteModel<Document>> mapped = new ArrayList<>(models.size());
        for (SourceAndModel holder : models) {
            mapped.add(beforeSaveAndMap(holder));
        }
        try {
            return writer(target).bulkWrite(mapped, new BulkWriteOptions().ordered(mode == BulkMode.ORDERED));
        } catch (MongoBulkWriteException e) {
            // Spring's contract: a write-concern error is a data-integrity problem, write errors a
            // BulkOperationException.
            if (e.getWriteConcernError() != null) {
                throw new DataIntegrityViolationException(e.getMessage(), e);
            }
            throw new BulkOperationException(e.getMessage(), e);
        }
    }

    /**
     * A {@link GuardedMongoTemplate}'s collection is routed through the guard already, on the template's session when
     * it has one (a transaction's writes then stay in the transaction). Another template's collection is wrapped here;
     * a session-bound one of Spring's own (whose session the guard cannot see) is written as Spring writes it.
     */
    private MongoCollection<Document> writer(MongoCollection<Document> collection) {
        if (RoutedCollection.isRouted(collection) || AopUtils.isAopProxy(collection)) {
            return collection;
        }
        return guard.guardCollection(access, collection).asMongoCollection();
    }

    private BulkOperations update(Query query, UpdateDefinition update, boolean upsert, boolean multi) {
        Objects.requireNonNull(query, "Query must not be null");
        Objects.requireNonNull(update, "Update must not be null");
        UpdateOptions options = new UpdateOptions().upsert(upsert);
        if (update.hasArrayFilters()) {
            List<Document> filters = new ArrayList<>();
            update.getArrayFilters().forEach(filter -> filters.add(filter.asDocument()));
            options.arrayFilters(filters);
        }
        if (!multi && query.isSorted()) {
            options.sort(query.getSortObject());
        }
        query.getCollation().map(Collation::toMongoCollation).ifPresent(options::collation);
        Document updateObject = update instanceof AggregationUpdate ? new Document() : update.getUpdateObject();
        add(
                update,
                multi
                        ? new UpdateManyModel<>(query.getQueryObject(), updateObject, options)
                        : new UpdateOneModel<>(query.getQueryObject(), updateObject, options));
        return this;
    }

    /** BeforeSave event and callback for inserts and replacements, then the query and update mapping. */
    private WriteModel<Document> beforeSaveAndMap(SourceAndModel holder) {
        Document target = savedDocument(holder.model());
        if (target != null) {
            publish(new BeforeSaveEvent<>(holder.source(), target, collectionName));
            callback(BeforeSaveCallback.class, holder.source(), target);
        }
        return map(holder.source(), holder.model());
    }

    private void afterSave(SourceAndModel holder) {
        Document target = savedDocument(holder.model());
        if (target != null) {
            publish(new AfterSaveEvent<>(holder.source(), target, collectionName));
            callback(AfterSaveCallback.class, holder.source(), target);
        }
    }

    private static @Nullable Document savedDocument(WriteModel<Document> model) {
        if (model instanceof InsertOneModel<Document> insert) {
            return insert.getDocument();
        }
        if (model instanceof ReplaceOneModel<Document> replace) {
            return replace.getReplacement();
        }
        return null;
    }

    private WriteModel<Document> map(Object source, WriteModel<Document> model) {
        if (model instanceof UpdateOneModel<Document> update) {
            return source instanceof AggregationUpdate pipeline
                    ? new UpdateOneModel<>(mappedQuery(update.getFilter()), pipeline(pipeline), update.getOptions())
                    : new UpdateOneModel<>(
                            mappedQuery(update.getFilter()), mappedUpdate(update.getUpdate()), update.getOptions());
        }
        if (model instanceof UpdateManyModel<Document> update) {
            return source instanceof AggregationUpdate pipeline
                    ? new UpdateManyModel<>(mappedQuery(update.getFilter()), pipeline(pipeline), update.getOptions())
                    : new UpdateManyModel<>(
                            mappedQuery(update.getFilter()), mappedUpdate(update.getUpdate()), update.getOptions());
        }
        if (model instanceof ReplaceOneModel<Document> replace) {
            return new ReplaceOneModel<>(
                    mappedQuery(replace.getFilter()), replace.getReplacement(), replace.getReplaceOptions());
        }
        if (model instanceof DeleteManyModel<Document> delete) {
            return new DeleteManyModel<>(mappedQuery(delete.getFilter()), delete.getOptions());
        }
        return model;
    }

    private Bson mappedQuery(@Nullable Bson query) {
        return queryMapper.getMappedObject(Objects.requireNonNull(query, "query"), entity);
    }

    private Bson mappedUpdate(@Nullable Bson update) {
        return updateMapper.getMappedObject(Objects.requireNonNull(update, "update"), entity);
    }

    private List<Document> pipeline(AggregationUpdate update) {
        Class<?> type = entity.isPresent() ? entity.get().getType() : Object.class;
        return update.toPipeline(
                new RelaxedTypeBasedAggregationOperationContext(type, updateMapper.getMappingContext(), queryMapper));
    }

    private Document toDocument(Object source) {
        if (source instanceof Document document) {
            return document;
        }
        Document sink = new Document();
        template.getConverter().write(source, sink);
        return sink;
    }

    private void add(Object source, WriteModel<Document> model) {
        models.add(new SourceAndModel(source, model));
    }

    private void publish(ApplicationEvent event) {
        if (eventPublisher != null) {
            eventPublisher.publishEvent(event);
        }
    }

    @SuppressWarnings({"rawtypes", "unchecked"})
    private Object callback(Class<? extends EntityCallback> type, Object entity, @Nullable Document document) {
        if (entityCallbacks == null) {
            return entity;
        }
        return document == null
                ? entityCallbacks.callback((Class) type, entity, collectionName)
                : entityCallbacks.callback((Class) type, entity, document, collectionName);
    }

    @Override
    public String toString() {
        return "GuardedBulkOperations{" + collectionName + ", " + mode + ", " + models.size() + " writes}";
    }

    private record SourceAndModel(Object source, WriteModel<Document> model) {}

    /** The template's database factory as the guard's sessions and databases. */
    private record FactoryAccess(MongoTemplate template) implements MongoAccess {
        @Override
        public com.mongodb.client.ClientSession startSession(com.mongodb.ClientSessionOptions options) {
            return template.getMongoDatabaseFactory().getSession(options);
        }

        @Override
        public com.mongodb.client.MongoDatabase getDatabase(String name) {
            return template.getMongoDatabaseFactory().getMongoDatabase(name);
        }
    }
}
