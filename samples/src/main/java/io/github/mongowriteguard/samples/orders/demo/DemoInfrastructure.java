package io.github.mongowriteguard.samples.orders.demo;

import com.mongodb.ConnectionString;
import io.github.mongowriteguard.testkit.EmulatedCluster;
import io.github.mongowriteguard.testkit.EmulatedShardedCluster;
import io.github.mongowriteguard.testkit.sharding.ShardKey;
import java.time.Duration;
import java.util.List;
import org.bson.BsonDocument;
import org.bson.BsonString;
import org.springframework.beans.factory.annotation.Value;
import org.springframework.boot.kafka.autoconfigure.KafkaConnectionDetails;
import org.springframework.boot.mongodb.autoconfigure.MongoConnectionDetails;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.context.annotation.Profile;
import org.springframework.kafka.test.EmbeddedKafkaKraftBroker;

/**
 * The {@code demo} profile's infrastructure, in the process: the testkit's emulated sharded cluster (real wire
 * protocol, real driver, {@code shop.orders} sharded hashed on {@code _id}) and an embedded Kafka broker (KRaft). They
 * reach Boot as {@link MongoConnectionDetails} and {@link KafkaConnectionDetails} beans, the way Boot's
 * Testcontainers and Docker Compose support plugs in services, so {@code spring.mongodb.uri} and
 * {@code spring.kafka.bootstrap-servers} are simply not used; the rest of the application does not change.
 */
@Configuration(proxyBeanMethods = false)
@Profile("demo")
public class DemoInfrastructure {
    /** The sharded collection the listener writes (the connection string's database, the collection of {@code Order}). */
    public static final String NAMESPACE = "shop.orders";

    @Bean(destroyMethod = "close")
    EmulatedShardedCluster emulatedCluster(@Value("${demo.shards}") int shards) {
        EmulatedShardedCluster cluster =
                EmulatedCluster.sharded().shards(shards).start();
        cluster.shardCollection(NAMESPACE, ShardKey.of(new BsonDocument("_id", new BsonString("hashed"))));
        return cluster;
    }

    @Bean
    MongoConnectionDetails emulatedClusterConnection(
            EmulatedShardedCluster cluster, @Value("${orders.socket-timeout}") Duration socketTimeout) {
        ConnectionString connection =
                new ConnectionString(cluster.connectionString() + "shop?socketTimeoutMS=" + socketTimeout.toMillis());
        return () -> connection;
    }

    /** Started by Spring ({@code afterPropertiesSet}) and stopped with the context ({@code destroy}). */
    @Bean
    EmbeddedKafkaKraftBroker embeddedKafka(@Value("${orders.topic}") String topic) {
        EmbeddedKafkaKraftBroker broker = new EmbeddedKafkaKraftBroker(1, 1, topic, topic + ".DLT");
        broker.brokerProperty("group.initial.rebalance.delay.ms", "0");
        return broker;
    }

    @Bean
    KafkaConnectionDetails embeddedKafkaConnection(EmbeddedKafkaKraftBroker broker) {
        List<String> servers = List.of(broker.getBrokersAsString().split(","));
        return () -> servers;
    }
}
