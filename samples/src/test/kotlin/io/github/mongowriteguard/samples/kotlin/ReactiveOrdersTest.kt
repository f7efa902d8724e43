package io.github.mongowriteguard.samples.kotlin

import com.mongodb.MongoClientSettings
import com.mongodb.reactivestreams.client.MongoClient
import com.mongodb.reactivestreams.client.MongoClients
import io.github.mongowriteguard.GuardedReactiveCollection
import io.github.mongowriteguard.WriteGuard
import io.github.mongowriteguard.outcome.WriteStatus
import io.github.mongowriteguard.test.EmulatedMongo
import io.github.mongowriteguard.test.EmulatedMongo.ShardedCollection
import io.github.mongowriteguard.test.EmulatedMongoCluster
import io.github.mongowriteguard.test.EmulatedMongoExtension
import kotlinx.coroutines.flow.toList
import kotlinx.coroutines.reactive.asFlow
import kotlinx.coroutines.runBlocking
import org.assertj.core.api.Assertions.assertThat
import org.junit.jupiter.api.AfterEach
import org.junit.jupiter.api.BeforeEach
import org.junit.jupiter.api.Tag
import org.junit.jupiter.api.Test
import org.junit.jupiter.api.extension.ExtendWith
import java.nio.file.Files
import java.nio.file.Path

/**
 * docs/reactive.md's Kotlin example ([addQuantities]) run with `runBlocking` on the emulated sharded cluster (5 shards
 * hashed on `_id`, the real reactive driver over a real socket): every upsert written in one round trip per shard;
 * replies lost past the guard's attempts are settled by the example, each `$inc` applied once; the doc's block is the
 * example's code. Tagged `kotlin-example`: the build runs it in a surefire execution of its own, whose class path has
 * the reactive driver that the application's tests do without.
 */
@Tag("kotlin-example")
@ExtendWith(EmulatedMongoExtension::class)
@EmulatedMongo(
    shards = 5,
    shardedCollections = [ShardedCollection(namespace = "shop.orders"), ShardedCollection(namespace = "shop.lost")],
)
class ReactiveOrdersTest {
    private val guard = WriteGuard.create()
    private lateinit var client: MongoClient

    @BeforeEach
    fun connect(mongo: EmulatedMongoCluster) {
        client =
            MongoClients.create(
                guard.configure(MongoClientSettings.builder().applyConnectionString(mongo.connectionString())).build(),
            )
    }

    @AfterEach
    fun close(mongo: EmulatedMongoCluster) {
        mongo.sharded().mongos(0).loseReplies(0)
        client.close()
    }

    private fun guarded(name: String) =
        GuardedReactiveCollection.of(guard, client, client.getDatabase("shop").getCollection(name))

    private suspend fun quantities(name: String): Map<Int, Int> = client
        .getDatabase("shop")
        .getCollection(name)
        .find()
        .asFlow()
        .toList()
        .associate { it.getInteger("_id") to it.getInteger("qty") }

    @Test
    fun aThousandUpsertsById_areAllWritten_inOneRoundTripPerShard(mongo: EmulatedMongoCluster) {
        val wanted = (0 until 1_000).associateWith { it % 7 + 1 }
        mongo.resetCounters()

        val outcome = runBlocking { addQuantities(guarded("orders"), wanted) }

        assertThat(outcome.isComplete).isTrue()
        assertThat(outcome.counts()[WriteStatus.APPLIED]).isEqualTo(1_000)
        assertThat(outcome.upserts()).hasSize(1_000)
        assertThat(outcome.commands()).isEqualTo(1)
        assertThat(mongo.rounds()).`as`("mongos rounds").isEqualTo(1)
        assertThat(mongo.roundTrips()).`as`("mongos-to-shard round trips").isEqualTo(5)
        assertThat(runBlocking { quantities("orders") }).isEqualTo(wanted)
    }

    @Test
    fun repliesLostPastTheGuardsAttempts_areSettledByTheExample_eachIncAppliedOnce(mongo: EmulatedMongoCluster) {
        val wanted = (0 until 100).associateWith { it % 7 + 1 }
        // mongos runs each send to its end, then closes the connection instead of answering: the guard's 3 sends
        // leave every write UNKNOWN; the example's settle sends the same copy a 4th time and gets the answer
        mongo.sharded().mongos(0).loseReplies(3, "update")
        mongo.resetCounters()

        val outcome = runBlocking { addQuantities(guarded("lost"), wanted) }

        assertThat(outcome.hasUnknown()).isFalse()
        assertThat(outcome.counts()[WriteStatus.APPLIED]).isEqualTo(100)
        assertThat(mongo.sharded().mongosTruth().commands("update")).`as`("3 lost sends and the settle's").hasSize(4)
        assertThat(mongo.sharded().mongosTruth().copies { it.commandName() == "update" }).hasSize(1)
        assertThat(runBlocking { quantities("lost") }).`as`("each \$inc applied once").isEqualTo(wanted)
    }

    @Test
    fun theKotlinBlockOfDocsReactiveMd_isTheExamplesCode() {
        val doc = Files.readString(Path.of("..", "docs", "reactive.md"))
        val blocks = Regex("```kotlin\\n(.*?)```", RegexOption.DOT_MATCHES_ALL).findAll(doc).map { it.groupValues[1] }
        val source =
            Files.readString(Path.of("src/test/kotlin/io/github/mongowriteguard/samples/kotlin/ReactiveOrders.kt"))
        val example = source.substringAfter("// docs/reactive.md:start\n").substringBefore("// docs/reactive.md:end")

        assertThat(blocks.toList()).containsExactly(example)
    }
}
