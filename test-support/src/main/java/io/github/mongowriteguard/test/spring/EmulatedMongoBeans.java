package io.github.mongowriteguard.test.spring;

import io.github.mongowriteguard.test.EmulatedMongoCluster;
import org.springframework.beans.factory.support.DefaultListableBeanFactory;
import org.springframework.context.ConfigurableApplicationContext;

/** The beans a running emulated deployment adds to an application context. */
final class EmulatedMongoBeans {
    /** The {@link EmulatedMongoCluster} bean's name. */
    static final String CLUSTER = "emulatedMongoCluster";

    /** The {@code MongoConnectionDetails} bean's name. */
    static final String CONNECTION_DETAILS = "emulatedMongoConnectionDetails";

    private EmulatedMongoBeans() {}

    /**
     * Registers the deployment and Spring Boot's connection details for it; the deployment stops with the context.
     *
     * @param context the context, before its refresh
     * @param cluster the running deployment
     */
    static void register(ConfigurableApplicationContext context, EmulatedMongoCluster cluster) {
        DefaultListableBeanFactory beans = (DefaultListableBeanFactory) context.getBeanFactory();
        beans.registerSingleton(CLUSTER, cluster);
        beans.registerDisposableBean(CLUSTER, cluster::close);
        beans.registerSingleton(CONNECTION_DETAILS, new EmulatedMongoConnectionDetails(cluster.connectionString()));
    }
}
