package io.github.mongowriteguard.test.spring;

import io.github.mongowriteguard.test.EmulatedMongoCluster;
import io.github.mongowriteguard.test.EmulatedMongoSpec;
import io.github.mongowriteguard.testkit.server.ServerVersion;
import java.util.LinkedHashMap;
import java.util.Map;
import org.bson.BsonDocument;
import org.springframework.boot.context.properties.bind.Bindable;
import org.springframework.boot.context.properties.bind.Binder;
import org.springframework.boot.mongodb.autoconfigure.MongoConnectionDetails;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.core.env.Environment;

/**
 * Runs your own application on the emulated deployment during development, from the test class path, as Spring Boot
 * runs it on Testcontainers: a main class in {@code src/test/java},
 *
 * <pre>{@code
 * public class TestShopApplication {
 *     public static void main(String[] args) {
 *         SpringApplication.from(ShopApplication::main).with(EmulatedMongoConfiguration.class).run(args);
 *     }
 * }
 * }</pre>
 *
 * <p>started with {@code mvn spring-boot:test-run} (or from the IDE). The deployment comes from {@code mongo.emulated.*}
 * properties: {@code shards} (0, the default: a replica set), {@code mongos}, {@code members}, {@code server-version},
 * {@code database}, {@code options} and {@code sharded-collections[shop.orders]={_id: "hashed"}}; it stops with the
 * application. In tests, prefer {@link io.github.mongowriteguard.test.EmulatedMongo}.
 */
@Configuration(proxyBeanMethods = false)
public class EmulatedMongoConfiguration {
    /** The prefix of the properties this configuration reads. */
    public static final String PREFIX = "mongo.emulated";

    /** Created by Spring. */
    public EmulatedMongoConfiguration() {}

    /**
     * The deployment the {@code mongo.emulated.*} properties describe, started.
     *
     * @param environment the application's environment
     * @return the running deployment, stopped with the application
     */
    @Bean(name = EmulatedMongoBeans.CLUSTER, destroyMethod = "close")
    public EmulatedMongoCluster emulatedMongoCluster(Environment environment) {
        return spec(environment).start();
    }

    /**
     * Spring Boot's connection details for the deployment.
     *
     * @param cluster the running deployment
     * @return the connection details
     */
    @Bean(name = EmulatedMongoBeans.CONNECTION_DETAILS)
    public MongoConnectionDetails emulatedMongoConnectionDetails(EmulatedMongoCluster cluster) {
        return new EmulatedMongoConnectionDetails(cluster.connectionString());
    }

    /**
     * The spec the properties describe.
     *
     * @param environment the application's environment
     * @return the validated spec
     * @throws IllegalArgumentException naming the property at fault
     */
    static EmulatedMongoSpec spec(Environment environment) {
        Binder binder = Binder.get(environment);
        Map<String, BsonDocument> sharded = new LinkedHashMap<>();
        binder.bind(PREFIX + ".sharded-collections", Bindable.mapOf(String.class, String.class))
                .orElse(Map.of())
                .forEach((namespace, key) -> sharded.put(namespace, EmulatedMongoSpec.parseKey(namespace, key)));
        return new EmulatedMongoSpec(
                binder.bind(PREFIX + ".shards", Integer.class).orElse(0),
                binder.bind(PREFIX + ".mongos", Integer.class).orElse(1),
                binder.bind(PREFIX + ".members", Integer.class).orElse(1),
                sharded,
                ServerVersion.parse(
                        binder.bind(PREFIX + ".server-version", String.class).orElse("4.4")),
                binder.bind(PREFIX + ".database", String.class).orElse(""),
                binder.bind(PREFIX + ".options", String.class).orElse(""),
                binder.bind(PREFIX + ".standalone", Boolean.class).orElse(false));
    }
}
