package io.github.mongowriteguard;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.fail;

import com.mongodb.ConnectionString;
import com.mongodb.MongoClientSettings;
import com.mongodb.reactivestreams.client.MongoClient;
import com.mongodb.reactivestreams.client.MongoClients;
import io.github.mongowriteguard.DifferentialBulk.Mode;
import io.github.mongowriteguard.DifferentialTest.Env;
import io.github.mongowriteguard.DifferentialTest.Stats;
import io.github.mongowriteguard.DifferentialTest.Subject;
import io.github.mongowriteguard.testkit.EmulatedCluster;
import io.github.mongowriteguard.testkit.EmulatedShardedCluster;
import io.github.mongowriteguard.testkit.TestDeployment;
import io.github.mongowriteguard.testkit.sharding.ShardKey;
import java.time.Duration;
import java.util.concurrent.TimeUnit;
import org.bson.BsonDocument;
import org.bson.BsonString;
import org.bson.Document;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.TestInfo;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;
import reactor.core.publisher.Mono;

/**
 * {@link DifferentialTest}'s random bulks (its generator, oracle and comparison) through the reactive guard: a
 * {@link GuardedReactiveCollection} over the Reactive Streams driver, {@code execute} or the driver-style
 * {@code bulkWrite}, awaited. The oracle is the driver's own bulk (driver-core's operations, which the reactive and
 * synchronous drivers share), run on the same deployment.
 */
class ReactiveDifferentialTest {
    private static final int REPLICA_SET_BULKS = 300;
    private static final int SHARDED_BULKS = 120;
    private static final long BASE_SEED = 20_261_203_000L;
    private static final ShardKey HASHED_ID = ShardKey.of(new BsonDocument("_id", new BsonString("hashed")));

    private static Env replicaSet;
    private static Env sharded;
    private static ReactiveGuards replicaSetGuards;
    private static ReactiveGuards shardedGuards;

    /** A default and a strict reactive guard, each with its own reactive client reporting what it ran. */
    private static final class ReactiveGuards implements AutoCloseable {
        final WriteGuard guard = WriteGuard.create();
        final WriteGuard strict = WriteGuard.create(
                WriteGuardSettings.builder().strictOrdered(true).build());
        final RanCommands ran = new RanCommands();
        final RanCommands strictRan = new RanCommands();
        final MongoClient client;
        final MongoClient strictClient;

        ReactiveGuards(String uri) {
            client = client(guard, uri, ran);
            strictClient = client(strict, uri, strictRan);
        }

        private static MongoClient client(WriteGuard guard, String uri, RanCommands ran) {
            return MongoClients.create(guard.configure(MongoClientSettings.builder()
                            .applyConnectionString(new ConnectionString(uri))
                            .applyToClusterSettings(c -> c.serverSelectionTimeout(10, TimeUnit.SECONDS))
                            .applyToSocketSettings(s -> s.readTimeout(5_000, TimeUnit.MILLISECONDS))
                            .addCommandListener(ran))
                    .build());
        }

        Subject subject() {
            return (env, bulk, collection, models, api) -> {
                boolean strictMode = bulk.mode == Mode.STRICT_ORDERED;
                WriteGuard g = strictMode ? strict : guard;
                MongoClient c = strictMode ? strictClient : client;
                GuardedReactiveCollection<Document> guarded = GuardedReactiveCollection.of(
                        g, c, c.getDatabase(Env.database(bulk)).getCollection(collection));
                return DifferentialTest.observe(
                        strictMode ? strictRan : ran,
                        bulk,
                        api,
                        () -> Mono.from(guarded.execute(models, bulk.options())).block(Duration.ofSeconds(60)),
                        () -> Mono.from(guarded.bulkWrite(models, bulk.options()))
                                .block(Duration.ofSeconds(60)));
            };
        }

        @Override
        public void close() {
            client.close();
            strictClient.close();
        }
    }

    @AfterAll
    static void close() {
        for (AutoCloseable closeable : new AutoCloseable[] {replicaSetGuards, shardedGuards, replicaSet, sharded}) {
            if (closeable != null) {
                try {
                    closeable.close();
                } catch (Exception e) {
                    throw new IllegalStateException(e);
                }
            }
        }
    }

    @ParameterizedTest
    @EnumSource(Mode.class)
    void reactiveGuard_equalsTheDriver_onAReplicaSet(Mode mode, TestInfo test) {
        if (replicaSet == null) {
            TestDeployment deployment = TestDeployment.replicaSet();
            replicaSet = new Env("replica set", false, deployment.connectionString(), deployment, namespace -> {});
            replicaSetGuards = new ReactiveGuards(deployment.connectionString());
        }
        check(replicaSet, replicaSetGuards, mode, REPLICA_SET_BULKS, 0, test);
    }

    @ParameterizedTest
    @EnumSource(
            value = Mode.class,
            names = {"UNORDERED", "ORDERED_KEYED"})
    void reactiveGuard_equalsTheDriver_onAShardedCluster(Mode mode, TestInfo test) {
        if (sharded == null) {
            EmulatedShardedCluster cluster = EmulatedCluster.sharded().shards(3).start();
            sharded = new Env(
                    "sharded (3 shards, hashed _id)",
                    true,
                    cluster.connectionString(),
                    cluster,
                    namespace -> cluster.shardCollection(namespace, HASHED_ID));
            shardedGuards = new ReactiveGuards(cluster.connectionString());
        }
        check(sharded, shardedGuards, mode, SHARDED_BULKS, 1_000_000L, test);
    }

    private static void check(Env env, ReactiveGuards guards, Mode mode, int defaultBulks, long offset, TestInfo test) {
        int bulks = Integer.getInteger("diff.bulks", defaultBulks);
        long base = Long.getLong("diff.seed", BASE_SEED + offset + mode.ordinal() * 100_000L);
        String replay = "-Dtest='ReactiveDifferentialTest#"
                + test.getTestMethod().orElseThrow().getName() + "'";
        Stats stats = DifferentialTest.run(env, mode, base, bulks, guards.subject(), replay);
        System.out.println("reactive: " + stats.summary());
        if (stats.differences > 0) {
            fail(stats.report());
        }
        assertThat(stats.bulks).isEqualTo(bulks);
        if (bulks >= 100) {
            assertThat(stats.withWriteErrors).as("bulks with write errors").isPositive();
            assertThat(stats.failPointsFired).as("fail points that fired").isPositive();
        }
    }
}
