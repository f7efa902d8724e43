package io.github.mongowriteguard.samples.orders.demo;

import io.github.mongowriteguard.samples.orders.Order;
import io.github.mongowriteguard.samples.orders.OrderEvent;
import io.github.mongowriteguard.samples.orders.OrderStatus;
import io.github.mongowriteguard.testkit.EmulatedShardedCluster;
import io.github.mongowriteguard.testkit.sharding.RoutedWrite;
import io.micrometer.core.instrument.Meter;
import io.micrometer.core.instrument.MeterRegistry;
import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.Comparator;
import java.util.Locale;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;
import java.util.stream.StreamSupport;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.beans.factory.annotation.Value;
import org.springframework.boot.ApplicationArguments;
import org.springframework.boot.ApplicationRunner;
import org.springframework.boot.SpringApplication;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.context.annotation.Profile;
import org.springframework.core.env.Environment;
import org.springframework.data.mongodb.core.MongoTemplate;
import org.springframework.data.mongodb.core.query.Criteria;
import org.springframework.data.mongodb.core.query.Query;
import org.springframework.kafka.core.KafkaTemplate;
import org.springframework.stereotype.Component;
import tools.jackson.databind.json.JsonMapper;

/**
 * The {@code demo} profile's run: publishes {@code demo.orders} orders' events (every order CREATED, then PAID, then
 * SHIPPED), waits until every order is stored as SHIPPED, and prints what the guard did: its meters
 * ({@code mongodb.guard.*}), the emulated mongos's round trips to the shards for the listener's bulks, and the
 * guard's Actuator health as the endpoint serves it. With {@code demo.exit=true} the application then exits.
 */
@Component
@Profile("demo")
public class DemoRun implements ApplicationRunner {
    private static final Logger LOG = LoggerFactory.getLogger(DemoRun.class);
    private static final Duration PATIENCE = Duration.ofSeconds(60);

    private final KafkaTemplate<String, String> kafka;
    private final MongoTemplate mongoTemplate;
    private final MeterRegistry meters;
    private final EmulatedShardedCluster cluster;
    private final JsonMapper json;
    private final Environment environment;
    private final ConfigurableApplicationContext context;

    @Value("${orders.topic}")
    private String topic;

    @Value("${demo.orders}")
    private int orders;

    @Value("${demo.exit}")
    private boolean exit;

    public DemoRun(
            KafkaTemplate<String, String> kafka,
            MongoTemplate mongoTemplate,
            MeterRegistry meters,
            EmulatedShardedCluster cluster,
            JsonMapper json,
            Environment environment,
            ConfigurableApplicationContext context) {
        this.kafka = kafka;
        this.mongoTemplate = mongoTemplate;
        this.meters = meters;
        this.cluster = cluster;
        this.json = json;
        this.environment = environment;
        this.context = context;
    }

    @Override
    public void run(ApplicationArguments args) throws Exception {
        LOG.info(
                "demo: publishing {} events of {} orders to '{}'", orders * OrderStatus.values().length, orders, topic);
        for (OrderStatus status : OrderStatus.values()) {
            for (int i = 0; i < orders; i++) {
                String orderId = "o-" + i;
                OrderEvent event = new OrderEvent(orderId, "c-" + (i % 17), status, 1000L + i);
                kafka.send(topic, orderId, json.writeValueAsString(event));
            }
        }
        kafka.flush();
        awaitShipped();
        System.out.println(report());
        if (exit) {
            System.exit(SpringApplication.exit(context));
        }
    }

    private void awaitShipped() throws InterruptedException {
        long deadline = System.nanoTime() + PATIENCE.toNanos();
        Query shipped = Query.query(Criteria.where("status").is(OrderStatus.SHIPPED));
        while (mongoTemplate.count(shipped, Order.class) < orders) {
            if (System.nanoTime() > deadline) {
                throw new IllegalStateException("demo: " + mongoTemplate.count(shipped, Order.class) + " of " + orders
                        + " orders SHIPPED after " + PATIENCE.toSeconds() + " s; see the listener's log");
            }
            TimeUnit.MILLISECONDS.sleep(50);
        }
    }

    private String report() throws IOException, InterruptedException {
        StringBuilder out = new StringBuilder("\n==== mongo-write-guard sample: " + orders + " orders, "
                + orders * OrderStatus.values().length + " events ====\n");
        out.append("orders stored: ")
                .append(mongoTemplate.count(new Query(), Order.class))
                .append(", all SHIPPED\n");

        var bulks = cluster.routing().writes(DemoInfrastructure.NAMESPACE);
        out.append(String.format(
                "mongos: %d write commands for the listener's bulks (%d ordered), %d writes, %d child batches"
                        + " to %d shards (an ORDERED bulk sent as is costs one child batch per change of shard)%n",
                bulks.size(),
                bulks.stream().filter(RoutedWrite::ordered).count(),
                bulks.stream().mapToInt(RoutedWrite::writes).sum(),
                bulks.stream().mapToInt(RoutedWrite::childBatches).sum(),
                cluster.shardNames().size()));

        out.append("meters:\n");
        meters.getMeters().stream()
                .filter(meter -> meter.getId().getName().startsWith("mongodb.guard."))
                .sorted(Comparator.comparing((Meter meter) -> meter.getId().getName())
                        .thenComparing(meter -> meter.getId().getTags().toString()))
                .forEach(meter -> out.append("  ")
                        .append(meter.getId().getName())
                        .append(meter.getId().getTags().stream()
                                .map(tag -> tag.getKey() + "=" + tag.getValue())
                                .collect(Collectors.joining(",", "{", "}")))
                        .append(' ')
                        .append(measurements(meter))
                        .append('\n'));

        String port = environment.getProperty("local.server.port");
        if (port != null) {
            String url = "http://localhost:" + port + "/actuator/health/mongoWriteGuard";
            HttpResponse<String> health = HttpClient.newHttpClient()
                    .send(HttpRequest.newBuilder(URI.create(url)).build(), HttpResponse.BodyHandlers.ofString());
            out.append("GET ")
                    .append(url)
                    .append(" -> ")
                    .append(health.statusCode())
                    .append(' ')
                    .append(health.body())
                    .append('\n');
            out.append("also: http://localhost:")
                    .append(port)
                    .append("/actuator/metrics/mongodb.guard.writes, /actuator/info\n");
        }
        return out.toString();
    }

    private static String measurements(Meter meter) {
        return StreamSupport.stream(meter.measure().spliterator(), false)
                .map(m -> m.getStatistic().name().toLowerCase(Locale.ROOT) + "=" + format(m.getValue()))
                .collect(Collectors.joining(" "));
    }

    private static String format(double value) {
        return value == Math.rint(value) ? String.valueOf((long) value) : String.format(Locale.ROOT, "%.3f", value);
    }
}
