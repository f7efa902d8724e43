package io.github.mongowriteguard.samples.orders;

import static org.assertj.core.api.Assertions.assertThat;

import com.mongodb.client.MongoClient;
import com.mongodb.client.MongoClients;
import io.github.mongowriteguard.samples.orders.demo.DemoInfrastructure;
import io.github.mongowriteguard.spring.data.GuardedMongoTemplate;
import io.github.mongowriteguard.testkit.EmulatedShardedCluster;
import io.github.mongowriteguard.testkit.sharding.RoutedWrite;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Timer;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.util.ArrayList;
import java.util.List;
import org.bson.Document;
import org.junit.jupiter.api.Test;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.web.server.LocalServerPort;
import org.springframework.data.mongodb.core.MongoTemplate;
import org.springframework.test.context.ActiveProfiles;

/**
 * The sample as {@code java -jar sample.jar --spring.profiles.active=demo} runs it, with fewer orders and without
 * exiting: the demo run publishes 3 events for each of {@value #ORDERS} orders and waits for them before the context is
 * ready; the test then checks, on its own client to the emulated cluster, the documents, the guard's meters, the
 * mongos's routing of the listener's bulks and the Actuator health endpoint over HTTP.
 */
@SpringBootTest(
        webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT,
        properties = {"demo.orders=" + OrdersApplicationSmokeTest.ORDERS, "demo.exit=false"})
@ActiveProfiles("demo")
class OrdersApplicationSmokeTest {
    static final int ORDERS = 150;

    @Autowired
    EmulatedShardedCluster cluster;

    @Autowired
    MongoTemplate mongoTemplate;

    @Autowired
    MeterRegistry meters;

    @LocalServerPort
    int port;

    @Test
    void everyEventIsStored_throughTheGuard_inFewRoundTrips_andTheGuardIsHealthy() throws Exception {
        assertThat(mongoTemplate).isInstanceOf(GuardedMongoTemplate.class);

        try (MongoClient checker = MongoClients.create(cluster.connectionString())) {
            List<Document> orders =
                    checker.getDatabase("shop").getCollection("orders").find().into(new ArrayList<>());
            assertThat(orders).hasSize(ORDERS);
            // Each order's last event wins: the guard kept the per-key order of the ORDERED bulk.
            assertThat(orders)
                    .allSatisfy(order -> assertThat(order.getString("status")).isEqualTo("SHIPPED"));
        }

        // Every listener bulk went through the guard: unordered rounds (at most one child batch per shard each), never
        // the ORDERED command Spring would send, which costs one mongos-to-shard round trip per change of shard.
        List<RoutedWrite> bulks = cluster.routing().writes(DemoInfrastructure.NAMESPACE);
        int shards = cluster.shardNames().size();
        assertThat(bulks).isNotEmpty().noneMatch(RoutedWrite::ordered);
        assertThat(bulks).allSatisfy(bulk -> assertThat(bulk.childBatches()).isLessThanOrEqualTo(shards));
        assertThat(bulks.stream().mapToInt(RoutedWrite::writes).sum()).isEqualTo(3 * ORDERS);
        System.out.printf(
                "sample smoke: %d events in %d write commands, %d child batches to %d shards%n",
                3 * ORDERS,
                bulks.size(),
                bulks.stream().mapToInt(RoutedWrite::childBatches).sum(),
                shards);

        // The guard's meters counted the listener's bulk writes, all successful.
        List<Timer> writes = List.copyOf(meters.find("mongodb.guard.writes")
                .tag("namespace", DemoInfrastructure.NAMESPACE)
                .timers());
        assertThat(writes).isNotEmpty().allSatisfy(timer -> {
            assertThat(timer.getId().getTag("operation")).isEqualTo("bulkWrite");
            assertThat(timer.getId().getTag("outcome")).isEqualTo("success");
        });
        long guardedCalls = writes.stream().mapToLong(Timer::count).sum();
        assertThat(guardedCalls).isPositive();
        assertThat(meters.get("mongodb.guard.rounds")
                        .tag("namespace", DemoInfrastructure.NAMESPACE)
                        .summary()
                        .totalAmount())
                .isEqualTo(bulks.size());
        assertThat(meters.get("mongodb.guard.copies.running").gauge().value()).isZero();

        HttpResponse<String> health = get("/actuator/health/mongoWriteGuard");
        assertThat(health.statusCode()).isEqualTo(200);
        assertThat(health.body()).contains("\"status\":\"UP\"");
        HttpResponse<String> metric = get("/actuator/metrics/mongodb.guard.writes");
        assertThat(metric.statusCode()).isEqualTo(200);
        assertThat(metric.body()).containsPattern("\"statistic\":\"COUNT\",\"value\":" + guardedCalls + "(\\.0)?[,}]");
    }

    private HttpResponse<String> get(String path) throws Exception {
        return HttpClient.newHttpClient()
                .send(
                        HttpRequest.newBuilder(URI.create("http://localhost:" + port + path))
                                .build(),
                        HttpResponse.BodyHandlers.ofString());
    }
}
