package io.github.mongowriteguard.test;

import java.lang.annotation.Documented;
import java.lang.annotation.ElementType;
import java.lang.annotation.Inherited;
import java.lang.annotation.Retention;
import java.lang.annotation.RetentionPolicy;
import java.lang.annotation.Target;

/**
 * Runs a test on an embedded, emulated MongoDB deployment (the testkit: real wire protocol, real driver, no Docker).
 *
 * <p>On a Spring Boot test ({@code @SpringBootTest}, {@code @DataMongoTest}) it starts the deployment with the test's
 * application context and registers it as Spring Boot's {@code MongoConnectionDetails}, so the application connects to
 * it whatever {@code spring.mongodb.uri} says, and as an {@link EmulatedMongoCluster} bean for assertions. Contexts of
 * tests with the same attributes are cached together with their deployment, as Spring caches contexts.
 *
 * <pre>{@code
 * @SpringBootTest
 * @EmulatedMongo(shards = 5, database = "shop", shardedCollections = @ShardedCollection(namespace = "shop.inventory"))
 * class InventoryTest {
 *     @Autowired EmulatedMongoCluster mongo;
 *
 *     @Test
 *     void bulk() {
 *         ...
 *         assertThat(mongo.roundTrips()).isEqualTo(5);   // mongos-to-shard round trips
 *     }
 * }
 * }</pre>
 *
 * <p>Without Spring, add {@code @ExtendWith(EmulatedMongoExtension.class)}: the extension reads this annotation (or
 * uses its defaults) and injects the deployment into test and lifecycle methods. Do not combine the extension with a
 * Spring test: each would start its own deployment.
 */
@Documented
@Inherited
@Retention(RetentionPolicy.RUNTIME)
@Target(ElementType.TYPE)
public @interface EmulatedMongo {
    /**
     * {@return the number of shards; 0 (the default) starts a replica set instead of a sharded cluster}
     */
    int shards() default 0;

    /** {@return the number of mongos routers of a sharded cluster; default 1} */
    int mongos() default 1;

    /**
     * {@return the members of a replica set (1, the default: a primary; 3: replicating members with elections);
     * replica sets only}
     */
    int members() default 1;

    /**
     * {@return true for a standalone mongod instead of a replica set (no replica set: sessions, but a {@code txnNumber}
     * is refused, so no retryable writes and no transactions; the guard then sends writes as the driver does there);
     * not with shards or members}
     */
    boolean standalone() default false;

    /** {@return the collections to shard when the cluster starts, with their keys; sharded clusters only} */
    ShardedCollection[] shardedCollections() default {};

    /** {@return the emulated server version: 4.2, 4.4 (the default), 5.0, 6.0, 7.0 or 8.0} */
    String serverVersion() default "4.4";

    /** {@return the database of the connection string (Spring Boot's default database); empty: none} */
    String database() default "";

    /**
     * {@return connection string options, e.g. {@code socketTimeoutMS=3000} (the guard derives its server deadline
     * from the socket timeout); empty: none}
     */
    String options() default "";

    /** A collection sharded when the cluster starts. */
    @Documented
    @Retention(RetentionPolicy.RUNTIME)
    @Target({})
    @interface ShardedCollection {
        /** {@return the namespace, {@code database.collection}} */
        String namespace();

        /** {@return the shard key pattern as JSON; default {@code {_id: "hashed"}}} */
        String key() default "{_id: \"hashed\"}";
    }
}
