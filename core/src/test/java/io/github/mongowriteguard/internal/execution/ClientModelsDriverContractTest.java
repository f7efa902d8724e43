package io.github.mongowriteguard.internal.execution;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.fail;

import com.mongodb.MongoNamespace;
import com.mongodb.client.model.Filters;
import com.mongodb.client.model.Updates;
import com.mongodb.client.model.bulk.ClientNamespacedWriteModel;
import java.lang.reflect.Method;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import org.bson.BsonDocument;
import org.bson.Document;
import org.bson.conversions.Bson;
import org.junit.jupiter.api.Test;

/**
 * The driver's client-level bulk write models ({@code ClientNamespacedWriteModel} and its options) have no public
 * getters in driver 5.6.5: the public interfaces only build. {@link ClientModels} reads the driver's internal classes
 * ({@code com.mongodb.internal.client.model.bulk}), as the driver's own {@code ClientBulkWriteOperation} does. This test
 * fails, naming the class and method, when a driver upgrade renames, removes or retypes anything ClientModels reads, or
 * when a public factory stops producing the internal class ClientModels expects.
 */
class ClientModelsDriverContractTest {
    private static final String INTERNAL = "com.mongodb.internal.client.model.bulk.";

    /** Every class and getter ClientModels reads, with the return type it relies on. */
    private static final Map<String, Map<String, Class<?>>> READ = new LinkedHashMap<>();

    static {
        READ.put(
                "AbstractClientNamespacedWriteModel",
                Map.of("getNamespace", MongoNamespace.class, "getModel", Object.class));
        READ.put("ConcreteClientInsertOneModel", Map.of("getDocument", Object.class));
        READ.put(
                "ConcreteClientReplaceOneModel",
                Map.of("getFilter", Bson.class, "getReplacement", Object.class, "getOptions", Object.class));
        READ.put(
                "ConcreteClientReplaceOneOptions",
                Map.of(
                        "isUpsert",
                        Optional.class,
                        "getCollation",
                        Optional.class,
                        "getHint",
                        Optional.class,
                        "getHintString",
                        Optional.class,
                        "getSort",
                        Optional.class));
        READ.put(
                "AbstractClientUpdateModel",
                Map.of(
                        "getFilter",
                        Bson.class,
                        "getUpdate",
                        Optional.class,
                        "getUpdatePipeline",
                        Optional.class,
                        "getOptions",
                        Object.class));
        READ.put(
                "AbstractClientUpdateOptions",
                Map.of(
                        "isUpsert",
                        Optional.class,
                        "getArrayFilters",
                        Optional.class,
                        "getCollation",
                        Optional.class,
                        "getHint",
                        Optional.class,
                        "getHintString",
                        Optional.class));
        READ.put("ConcreteClientUpdateOneOptions", Map.of("getSort", Optional.class));
        READ.put("AbstractClientDeleteModel", Map.of("getFilter", Bson.class, "getOptions", Object.class));
        READ.put(
                "AbstractClientDeleteOptions",
                Map.of("getCollation", Optional.class, "getHint", Optional.class, "getHintString", Optional.class));
        READ.put("ClientWriteModel", Map.of());
        READ.put("ConcreteClientUpdateOneModel", Map.of());
        READ.put("ConcreteClientUpdateManyModel", Map.of());
        READ.put("ConcreteClientDeleteManyModel", Map.of());
        // ClientBulkExecutor reads the options the same way.
        READ.put(
                "ConcreteClientBulkWriteOptions",
                Map.of(
                        "isOrdered",
                        boolean.class,
                        "isBypassDocumentValidation",
                        Optional.class,
                        "getComment",
                        Optional.class,
                        "getLet",
                        Optional.class,
                        "isVerboseResults",
                        boolean.class));
    }

    /** The result classes GuardedClient builds its verbose results with, and their constructors' parameters. */
    private static final Map<String, List<Class<?>>> BUILT = Map.of(
            "ConcreteClientInsertOneResult", List.of(org.bson.BsonValue.class),
            "ConcreteClientUpdateResult", List.of(long.class, long.class, org.bson.BsonValue.class),
            "ConcreteClientDeleteResult", List.of(long.class));

    @Test
    void everyInternalClassAndGetterClientModelsReads_existsWithTheTypeItReliesOn() {
        READ.forEach((simpleName, getters) -> {
            Class<?> type = internal(simpleName);
            getters.forEach((getter, returns) -> {
                Method method;
                try {
                    method = type.getMethod(getter);
                } catch (NoSuchMethodException e) {
                    throw new AssertionError(message(simpleName + "." + getter + "() is gone"), e);
                }
                assertThat(returns.isAssignableFrom(method.getReturnType()))
                        .as(message(simpleName + "." + getter + "() now returns "
                                + method.getReturnType().getName() + ", ClientModels expects " + returns.getName()))
                        .isTrue();
            });
        });
    }

    @Test
    void theResultClassesGuardedClientBuilds_haveTheConstructorsItCalls() {
        BUILT.forEach((simpleName, parameters) -> {
            try {
                internal(simpleName).getConstructor(parameters.toArray(Class<?>[]::new));
            } catch (NoSuchMethodException e) {
                throw new AssertionError(message("the constructor " + simpleName + parameters + " is gone"), e);
            }
        });
    }

    @Test
    void thePublicFactories_produceTheInternalModelsClientModelsConverts() {
        MongoNamespace ns = new MongoNamespace("db", "c");
        Bson filter = Filters.eq("_id", 1);
        Map<String, ClientNamespacedWriteModel> models = new LinkedHashMap<>();
        models.put("ConcreteClientInsertOneModel", ClientNamespacedWriteModel.insertOne(ns, new Document("_id", 1)));
        models.put(
                "ConcreteClientUpdateOneModel", ClientNamespacedWriteModel.updateOne(ns, filter, Updates.set("v", 1)));
        models.put(
                "ConcreteClientUpdateManyModel",
                ClientNamespacedWriteModel.updateMany(ns, filter, Updates.set("v", 1)));
        models.put(
                "ConcreteClientReplaceOneModel",
                ClientNamespacedWriteModel.replaceOne(ns, filter, new Document("v", 1)));
        models.put("ConcreteClientDeleteOneModel", ClientNamespacedWriteModel.deleteOne(ns, filter));
        models.put("ConcreteClientDeleteManyModel", ClientNamespacedWriteModel.deleteMany(ns, filter));

        models.forEach((expected, model) -> {
            assertThat(internal("AbstractClientNamespacedWriteModel").isInstance(model))
                    .as(message("ClientNamespacedWriteModel's factory now returns "
                            + model.getClass().getName()))
                    .isTrue();
            Object inner;
            try {
                inner = internal("AbstractClientNamespacedWriteModel")
                        .getMethod("getModel")
                        .invoke(model);
            } catch (ReflectiveOperationException e) {
                throw new AssertionError(message("AbstractClientNamespacedWriteModel.getModel() cannot be called"), e);
            }
            assertThat(inner.getClass().getName())
                    .as(message("the factory of " + expected + " now builds "
                            + inner.getClass().getName()))
                    .isEqualTo(INTERNAL + expected);
        });

        List<ClientModels.NamespacedModel> converted = ClientModels.convert(
                List.copyOf(models.values()), com.mongodb.MongoClientSettings.getDefaultCodecRegistry());
        assertThat(converted)
                .hasSize(models.size())
                .allSatisfy(one -> assertThat(one.namespace()).isEqualTo(ns));
        assertThat(converted.get(0).model())
                .isInstanceOfSatisfying(
                        com.mongodb.client.model.InsertOneModel.class,
                        insert -> assertThat(insert.getDocument()).isEqualTo(BsonDocument.parse("{_id: 1}")));
    }

    private static Class<?> internal(String simpleName) {
        try {
            return Class.forName(INTERNAL + simpleName);
        } catch (ClassNotFoundException e) {
            return fail(message(INTERNAL + simpleName + " is gone"), e);
        }
    }

    private static String message(String change) {
        return "The MongoDB driver's internal client bulk write models changed (" + change + "). The guard's client"
                + " bulkWrite reads them in core's internal/execution/ClientModels and ClientBulkExecutor; adapt ClientModels (and ClientBulkExecutor, GuardedClient) to this driver version"
                + " (see README, Compatibility) before releasing.";
    }
}
