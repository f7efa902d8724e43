package io.github.mongowriteguard.test;

import com.mongodb.ConnectionString;
import io.github.mongowriteguard.testkit.EmulatedReplicaSet;
import io.github.mongowriteguard.testkit.EmulatedShardedCluster;
import io.github.mongowriteguard.testkit.EmulatedStandalone;
import java.util.Set;
import org.junit.jupiter.api.extension.BeforeAllCallback;
import org.junit.jupiter.api.extension.ExtensionContext;
import org.junit.jupiter.api.extension.ParameterContext;
import org.junit.jupiter.api.extension.ParameterResolutionException;
import org.junit.jupiter.api.extension.ParameterResolver;
import org.junit.platform.commons.support.AnnotationSupport;

/**
 * A JUnit 5 extension for tests without Spring: starts the emulated deployment that the test class's
 * {@link EmulatedMongo} describes (a one-member replica set without it) once per test class, stops it after the
 * class, and injects it into constructors, test methods and lifecycle methods as {@link EmulatedMongoCluster},
 * {@link ConnectionString}, {@link EmulatedShardedCluster} or {@link EmulatedReplicaSet}.
 *
 * <pre>{@code
 * @ExtendWith(EmulatedMongoExtension.class)
 * @EmulatedMongo(shards = 3, shardedCollections = @ShardedCollection(namespace = "shop.orders"))
 * class OrdersTest {
 *     @Test
 *     void orderedBulk(EmulatedMongoCluster mongo) {
 *         try (MongoClient client = MongoClients.create(mongo.connectionString())) { ... }
 *         assertThat(mongo.roundTrips()).isEqualTo(3);
 *     }
 * }
 * }</pre>
 */
public final class EmulatedMongoExtension implements BeforeAllCallback, ParameterResolver {
    private static final ExtensionContext.Namespace NAMESPACE =
            ExtensionContext.Namespace.create(EmulatedMongoExtension.class);
    private static final Set<Class<?>> INJECTED = Set.of(
            EmulatedMongoCluster.class,
            ConnectionString.class,
            EmulatedShardedCluster.class,
            EmulatedReplicaSet.class,
            EmulatedStandalone.class);

    /** Creates the extension; JUnit does it for {@code @ExtendWith}. */
    public EmulatedMongoExtension() {}

    @Override
    public void beforeAll(ExtensionContext context) {
        cluster(context);
    }

    @Override
    public boolean supportsParameter(ParameterContext parameter, ExtensionContext context) {
        return INJECTED.contains(parameter.getParameter().getType());
    }

    @Override
    public Object resolveParameter(ParameterContext parameter, ExtensionContext context) {
        EmulatedMongoCluster cluster = cluster(context);
        Class<?> type = parameter.getParameter().getType();
        try {
            if (type == ConnectionString.class) {
                return cluster.connectionString();
            }
            if (type == EmulatedShardedCluster.class) {
                return cluster.sharded();
            }
            if (type == EmulatedReplicaSet.class) {
                return cluster.replicaSet();
            }
            if (type == EmulatedStandalone.class) {
                return cluster.standalone();
            }
            return cluster;
        } catch (IllegalStateException wrongTopology) {
            throw new ParameterResolutionException(
                    parameter.getParameter() + ": " + wrongTopology.getMessage(), wrongTopology);
        }
    }

    /** The class's deployment, started on first use and closed with the class's extension context. */
    private static EmulatedMongoCluster cluster(ExtensionContext context) {
        ExtensionContext classContext = context;
        while (classContext.getTestMethod().isPresent()
                && classContext.getParent().isPresent()) {
            classContext = classContext.getParent().get();
        }
        Class<?> testClass = classContext.getRequiredTestClass();
        return classContext
                .getStore(NAMESPACE)
                .getOrComputeIfAbsent(
                        testClass,
                        key -> new Running(AnnotationSupport.findAnnotation(testClass, EmulatedMongo.class)
                                .map(EmulatedMongoSpec::of)
                                .orElseGet(EmulatedMongoSpec::defaults)
                                .start()),
                        Running.class)
                .cluster();
    }

    /** Closed by JUnit when the class's store is closed. */
    private record Running(EmulatedMongoCluster cluster) implements AutoCloseable {
        @Override
        public void close() {
            cluster.close();
        }
    }
}
