package io.github.mongowriteguard.internal.plan;

import static io.github.mongowriteguard.internal.plan.Models.planner;
import static io.github.mongowriteguard.internal.plan.Models.replace;
import static io.github.mongowriteguard.internal.plan.Models.update;
import static org.assertj.core.api.Assertions.assertThat;

import com.mongodb.client.model.WriteModel;
import io.github.mongowriteguard.bulk.Round;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.atomic.AtomicInteger;
import org.bson.BsonDocument;
import org.bson.BsonInt32;
import org.bson.BsonInt64;
import org.bson.BsonMaxKey;
import org.bson.BsonMinKey;
import org.bson.BsonString;
import org.bson.BsonValue;
import org.bson.Document;
import org.junit.jupiter.api.Test;

/** How the placement of the keys decides which repeated keys of an ordered request share one ORDERED command. */
class KeyPlacementRunsTest {

    private static final BsonDocument HASHED_ID = new BsonDocument("_id", new BsonString("hashed"));

    /** Four hashed chunks, one per shard: [MinKey, -2^62) s0, [-2^62, 0) s1, [0, 2^62) s2, [2^62, MaxKey) s3. */
    private static final List<BsonDocument> FOUR_SHARDS = List.of(
            chunk(new BsonInt64(1L << 62), "s3"),
            chunk(new BsonMinKey(), "s0"),
            chunk(new BsonInt64(0), "s2"),
            chunk(new BsonInt64(-(1L << 62)), "s1"));

    private static BsonDocument chunk(BsonValue min, String shard) {
        return new BsonDocument("min", new BsonDocument("_id", min))
                .append("max", new BsonDocument("_id", new BsonMaxKey()))
                .append("shard", new BsonString(shard));
    }

    private static PlannedBulk plan(List<WriteModel<Document>> models, KeyPlacement placement) {
        return planner()
                .plan(
                        models,
                        PlanOptions.builder().keyPlacement(() -> placement).build());
    }

    @Test
    void orderedManyKeysOnOnePlace_areOneRoundOfKeyRuns() {
        PlannedBulk plan = plan(KeyRunsTest.events(100, 10), KeyPlacement.singleTarget());

        assertThat(plan.rounds()).hasSize(1);
        Round round = plan.rounds().get(0);
        assertThat(round.keyRuns()).hasSize(1_000);
        assertThat(round.unorderedPart()).isEmpty();
        // each key's run contiguous, in the caller's order, runs in the order of their first writes
        for (int k = 0; k < 100; k++) {
            for (int t = 0; t < 10; t++) {
                assertThat(round.keyRuns().get(k * 10 + t)).isEqualTo(t * 100 + k);
            }
        }
    }

    @Test
    void orderedManyKeysOnKnownShards_areKeyRunsGroupedByShard() {
        KeyPlacement placement = KeyPlacement.fromChunks(HASHED_ID, FOUR_SHARDS);

        PlannedBulk plan = plan(KeyRunsTest.events(100, 10), placement);

        assertThat(plan.rounds()).hasSize(1);
        List<Integer> sent = plan.rounds().get(0).keyRuns();
        assertThat(sent).hasSize(1_000).doesNotHaveDuplicates();
        int shardChanges = 0;
        Set<Integer> shardsDone = new HashSet<>();
        for (int position = 1; position < sent.size(); position++) {
            int before = placement.shardOf(plan.id(sent.get(position - 1)).orElseThrow());
            int shard = placement.shardOf(plan.id(sent.get(position)).orElseThrow());
            if (shard != before) {
                shardChanges++;
                assertThat(shardsDone.add(before))
                        .as("shard %d comes back", before)
                        .isTrue();
            }
        }
        assertThat(shardChanges).isEqualTo(3); // one child batch per shard through mongos
        assertThat(plan.reason()).contains("1 UNORDERED round").contains("as ORDERED key runs");
    }

    @Test
    void orderedManyKeysOfUnknownShard_stayInRounds() {
        PlannedBulk plan = plan(KeyRunsTest.events(100, 10), KeyPlacement.unknown());

        assertThat(plan.rounds()).hasSize(10);
        assertThat(plan.rounds())
                .allSatisfy(round -> assertThat(round.keyRuns()).isEmpty());
    }

    @Test
    void orderedRunsOfTwoTypes_areGroupedByTypeThenShard() {
        List<WriteModel<Document>> models = new ArrayList<>();
        for (int t = 0; t < 8; t++) { // 8 rounds, or 4 shards x 2 types of ORDERED key runs
            for (int k = 0; k < 20; k++) {
                models.add(k % 2 == 0 ? update(k) : replace(k));
            }
        }
        KeyPlacement placement = KeyPlacement.fromChunks(HASHED_ID, FOUR_SHARDS);

        List<Integer> sent = plan(models, placement).rounds().get(0).keyRuns();

        assertThat(sent).hasSize(160);
        for (int position = 0; position < 80; position++) {
            assertThat(sent.get(position) % 2).as("updates first").isZero();
        }
        for (int position = 1; position < 160; position++) {
            if (position == 80) {
                continue;
            }
            assertThat(placement.shardOf(new BsonInt32(sent.get(position) % 20)))
                    .isGreaterThanOrEqualTo(placement.shardOf(new BsonInt32(sent.get(position - 1) % 20)));
        }
    }

    @Test
    void placement_isAskedOnlyForAnOrderedRequestThatRepeatsAKey() {
        AtomicInteger asked = new AtomicInteger();
        PlanOptions.Builder options = PlanOptions.builder().keyPlacement(() -> {
            asked.incrementAndGet();
            return KeyPlacement.singleTarget();
        });

        planner().plan(List.of(update(1), update(2)), options.build());
        planner().plan(List.of(update(1), update(1)), options.ordered(false).build());
        assertThat(asked).hasValue(0);

        planner().plan(List.of(update(1), update(1)), options.ordered(true).build());
        assertThat(asked).hasValue(1);
    }

    @Test
    void hashedPlacement_findsTheChunkOfTheServersHash() {
        KeyPlacement placement = KeyPlacement.fromChunks(HASHED_ID, FOUR_SHARDS);
        for (BsonValue id : List.<BsonValue>of(
                new BsonInt32(7), new BsonString("seven"), new org.bson.BsonObjectId(new org.bson.types.ObjectId()))) {
            long hash = HashedIds.hash(id);
            int expected = hash < -(1L << 62) ? 0 : hash < 0 ? 1 : hash < (1L << 62) ? 2 : 3;
            assertThat(placement.shardOf(id)).as("%s", id).isEqualTo(expected); // numbered by name: s0 .. s3
        }
        assertThat(placement.shardOf(new BsonDocument("a", new BsonInt32(1)))).isEqualTo(KeyPlacement.UNKNOWN);
    }

    @Test
    void hashOfAnId_doesNotDependOnItsNumericType() {
        assertThat(HashedIds.hash(new BsonInt32(5)))
                .isEqualTo(HashedIds.hash(new BsonInt64(5)))
                .isEqualTo(HashedIds.hash(new org.bson.BsonDouble(5.7)));
    }

    @Test
    void rangePlacement_comparesIdsInTheServersOrder() {
        BsonDocument byId = new BsonDocument("_id", new BsonInt32(1));
        KeyPlacement placement = KeyPlacement.fromChunks(
                byId,
                List.of(
                        chunk(new BsonMinKey(), "a-low"),
                        chunk(new BsonInt32(100), "b-high"),
                        chunk(new BsonString(""), "c-strings")));

        assertThat(placement.shardOf(new BsonInt32(5))).isEqualTo(0);
        assertThat(placement.shardOf(new org.bson.BsonDouble(99.5))).isEqualTo(0);
        assertThat(placement.shardOf(new BsonInt64(100))).isEqualTo(1);
        assertThat(placement.shardOf(new BsonString("a"))).isEqualTo(2);
        assertThat(placement.shardOf(new org.bson.BsonBoolean(true))).isEqualTo(KeyPlacement.UNKNOWN);
    }

    @Test
    void otherShardKeys_giveNoPlacement() {
        assertThat(KeyPlacement.fromChunks(new BsonDocument("tenant", new BsonInt32(1)), FOUR_SHARDS)
                        .shardOf(new BsonInt32(1)))
                .isEqualTo(KeyPlacement.UNKNOWN);
        assertThat(KeyPlacement.singleTarget().isSingleTarget()).isTrue();
        assertThat(KeyPlacement.unknown().isSingleTarget()).isFalse();
    }
}
