package io.github.mongowriteguard.samples.kotlin

import com.mongodb.client.model.BulkWriteOptions
import com.mongodb.client.model.Filters
import com.mongodb.client.model.UpdateOneModel
import com.mongodb.client.model.UpdateOptions
import com.mongodb.client.model.Updates
import io.github.mongowriteguard.GuardedReactiveCollection
import io.github.mongowriteguard.outcome.WriteOutcome
import kotlinx.coroutines.reactive.awaitSingle
import org.bson.Document

// The Kotlin example of docs/reactive.md: the lines between the markers are the doc's block, word for word
// (ReactiveOrdersTest checks it).
// docs/reactive.md:start
// orders = GuardedReactiveCollection.of(guard, client, client.getDatabase("shop").getCollection("orders"))
suspend fun addQuantities(
    orders: GuardedReactiveCollection<Document>,
    quantities: Map<Int, Int>,
): WriteOutcome<Document> {
    val upserts =
        quantities.map { (id, qty) ->
            UpdateOneModel<Document>(Filters.eq("_id", id), Updates.inc("qty", qty), UpdateOptions().upsert(true))
        }
    val outcome = orders.execute(upserts, BulkWriteOptions().ordered(true)).awaitSingle()
    // UNKNOWN: the same copies sent again, never new ones; still UNKNOWN: settle later
    return if (outcome.hasUnknown()) orders.settle(outcome).awaitSingle() else outcome
}
// docs/reactive.md:end
