package io.github.mongowriteguard;

import static org.assertj.core.api.Assertions.assertThat;

import io.github.mongowriteguard.metrics.HeldStructure;
import io.github.mongowriteguard.outcome.WriteOutcome;
import io.github.mongowriteguard.testkit.EmulatedCluster;
import io.github.mongowriteguard.testkit.EmulatedShardedCluster;
import io.github.mongowriteguard.testkit.sharding.ChunkMap;
import io.github.mongowriteguard.testkit.truth.ReceivedCommand;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.util.List;
import java.util.Set;
import java.util.function.Predicate;
import org.bson.Document;
import org.junit.jupiter.api.Test;

/**
 * Guards of one JVM, each with its own client, share what they read of a sharded cluster's catalog: an ordered bulk
 * that repeats keys reads the collection's chunks once for all of them, not once per guard (mongos' truth counts the
 * reads); and each guard lists and meters what it holds, with its bound.
 */
class SharedCatalogTest {

    private static final int CHUNKS = 200;

    @Test
    void twoGuardsOnTwoClientsOfOneCluster_readTheChunksOnce() {
        try (EmulatedShardedCluster cluster = SideBySideKeyRunsTest.cluster();
                GuardFixture first = new GuardFixture(cluster.connectionString(), 30_000);
                GuardFixture second = new GuardFixture(cluster.connectionString(), 30_000)) {
            cluster.shardCollection("db.events", SideBySideKeyRunsTest.HASHED_ID);
            cluster.placeChunks(
                    "db.events",
                    ChunkMap.hashedPresplit(SideBySideKeyRunsTest.HASHED_ID, cluster.shardNames(), CHUNKS)
                            .chunks());

            for (GuardFixture fixture : List.of(first, second)) {
                GuardedCollection<Document> events =
                        fixture.wrap(fixture.client.getDatabase("db").getCollection("events"));
                WriteOutcome<Document> outcome = events.execute(
                        SideBySideKeyRunsTest.events(200, 20, Set.of()), SideBySideKeyRunsTest.ordered());
                assertThat(outcome.isComplete()).isTrue();
                assertThat(outcome.commands())
                        .as("one ORDERED command per shard")
                        .isEqualTo(SideBySideKeyRunsTest.SHARDS);
            }

            assertThat(cluster.mongosTruth().commands(on("config.chunks"))).hasSize(1);
            assertThat(cluster.mongosTruth().commands(on("config.collections"))).hasSize(1);
        }
    }

    @Test
    void aGuard_listsWhatItHolds_withItsBound_andMetersIt() {
        SimpleMeterRegistry registry = new SimpleMeterRegistry();
        try (EmulatedShardedCluster cluster =
                EmulatedCluster.sharded().shards(2).start()) {
            WriteGuard guard = WriteGuard.builder().meterRegistry(registry).build();
            cluster.shardCollection("db.events", SideBySideKeyRunsTest.HASHED_ID);
            try (com.mongodb.client.MongoClient client =
                    com.mongodb.client.MongoClients.create(guard.configure(com.mongodb.MongoClientSettings.builder()
                                    .applyConnectionString(
                                            new com.mongodb.ConnectionString(cluster.connectionString())))
                            .build())) {
                GuardedCollection<Document> events =
                        guard.guardCollection(client, client.getDatabase("db").getCollection("events"));
                events.execute(SideBySideKeyRunsTest.events(20, 5, Set.of()), SideBySideKeyRunsTest.ordered());

                List<HeldStructure> held = guard.getHeldStructures();
                assertThat(held)
                        .extracting(HeldStructure::name)
                        .containsExactly(
                                "copies.tracked",
                                "copies.held",
                                "executors",
                                "warnings",
                                "catalog.clients",
                                "catalog.collections",
                                "catalog.collection.options",
                                "catalog.routing.tables",
                                "catalog.chunks");
                HeldStructure chunks = held.get(held.size() - 1);
                assertThat(chunks.size()).isGreaterThanOrEqualTo(4); // this cluster's 2 chunks per shard, and others'
                assertThat(chunks.bound()).isEqualTo(100_000);
                // the copies tracked and those held for settle each have a count bound: 10,000 and the settle hold's
                assertThat(held.get(0).bound()).isEqualTo(10_000);
                // nothing UNKNOWN: no command held for a settle, within the settle hold's bound
                assertThat(held.get(1).size()).isZero();
                assertThat(held.get(1).bound()).isEqualTo(guard.getSettings().getSettleHoldMaxCopies());
                assertThat(held.get(2).size()).isEqualTo(1);
                assertThat(held.get(2).bound()).isEqualTo(1_024);
                assertThat(registry.get("mongodb.guard.held")
                                .tag("structure", "executors")
                                .gauge()
                                .value())
                        .isEqualTo(1);
                assertThat(registry.get("mongodb.guard.held.bound")
                                .tag("structure", "catalog.chunks")
                                .gauge()
                                .value())
                        .isEqualTo(100_000);
                assertThat(registry.get("mongodb.guard.held.bound")
                                .tag("structure", "copies.tracked")
                                .gauge()
                                .value())
                        .isEqualTo(10_000);
            }
        }
    }

    private static Predicate<ReceivedCommand> on(String namespace) {
        return command ->
                command.commandName().equals("find") && command.namespace().equals(namespace);
    }
}
