package io.github.mongowriteguard.security;

import static org.assertj.core.api.Assertions.assertThat;

import com.mongodb.bulk.BulkWriteResult;
import com.mongodb.client.model.BulkWriteOptions;
import com.mongodb.client.model.Filters;
import com.mongodb.client.model.InsertOneModel;
import com.mongodb.client.model.UpdateOneModel;
import com.mongodb.client.model.UpdateOptions;
import com.mongodb.client.model.Updates;
import com.mongodb.client.model.WriteModel;
import io.github.mongowriteguard.bulk.BulkPlan;
import io.github.mongowriteguard.bulk.PlanMode;
import io.github.mongowriteguard.bulk.Round;
import java.util.ArrayList;
import java.util.BitSet;
import java.util.HashSet;
import java.util.List;
import org.bson.BsonInt32;
import org.bson.Document;
import org.junit.jupiter.api.Test;

/**
 * A large bulk through the raw driver and through the guard on one emulated replica set.
 *
 * <p>Sending 200,000 writes through both took about 50 s on a loaded two-core machine (the emulator's inserts are the
 * cost, the driver's as much as the guard's), too much for {@code mvn verify}. So the guard's planning path, which reads
 * and measures (encodes) every write, runs on the full 200,000 writes without sending, and is checked against the
 * count; the bulk that is sent, through both, is 20,000 writes of the same shape, compared document by document and by
 * result.
 */
class LargeBulkParityTest {
    private static final int PLANNED = 200_000;
    private static final int SENT = 20_000;

    @Test
    void aBulkOf200000Writes_isPlannedWholly_everyWriteInOneRoundOnce() {
        try (SideBySide sides = new SideBySide("large_bulk_plan")) {
            BulkPlan plan = sides.guarded.plan(bulk(PLANNED), new BulkWriteOptions().ordered(false));

            assertThat(plan.size()).isEqualTo(PLANNED);
            assertThat(plan.mode()).isEqualTo(PlanMode.UNORDERED_ROUNDS);
            BitSet planned = new BitSet(PLANNED);
            int inRounds = 0;
            for (Round round : plan.rounds()) {
                for (int index : round.indices()) {
                    assertThat(planned.get(index))
                            .as("write %d in two rounds", index)
                            .isFalse();
                    planned.set(index);
                    inRounds++;
                }
            }
            assertThat(inRounds).isEqualTo(PLANNED);
            assertThat(planned.cardinality()).isEqualTo(PLANNED);
            // every _id distinct: nothing waits for an earlier write on its _id
            assertThat(plan.rounds()).hasSize(1);
            for (int index : new int[] {0, 9, PLANNED / 2, PLANNED - 1}) {
                assertThat(plan.id(index)).contains(new BsonInt32(index));
                // an insert's document is measured (encoded) when planned; an update has no document
                assertThat(plan.measuredDocumentSize(index) > 0).isEqualTo(index % 10 != 9);
            }
            assertThat(sides.sentWrites).isEmpty();
        }
    }

    @Test
    void aSentBulk_storesTheSameDocuments_andReturnsTheSameResult_asTheDriver() {
        // 120 s: under load a 10 s socket timeout once made the driver resend a batch of a large bulk
        try (SideBySide sides = new SideBySide("large_bulk", 120)) {
            BulkWriteResult driver = sides.driver.bulkWrite(bulk(SENT), new BulkWriteOptions().ordered(false));
            BulkWriteResult guard = sides.guarded.bulkWrite(bulk(SENT), new BulkWriteOptions().ordered(false));

            assertThat(guard.getInsertedCount())
                    .isEqualTo(driver.getInsertedCount())
                    .isEqualTo(SENT * 9 / 10);
            assertThat(guard.getUpserts()).hasSize(SENT / 10).isEqualTo(driver.getUpserts());
            assertThat(guard).isEqualTo(driver);
            List<Document> stored = sides.guarded.unwrap().find().into(new ArrayList<>());
            assertThat(stored).hasSize(SENT);
            assertThat(new HashSet<>(stored))
                    .isEqualTo(new HashSet<>(sides.driver.find().into(new ArrayList<>())));
        }
    }

    /** Small documents, each on its own {@code _id}: nine in ten are inserts, one in ten an upsert. */
    private static List<WriteModel<Document>> bulk(int writes) {
        List<WriteModel<Document>> models = new ArrayList<>(writes);
        for (int i = 0; i < writes; i++) {
            if (i % 10 == 9) {
                models.add(new UpdateOneModel<>(
                        Filters.eq("_id", i), Updates.set("v", i % 7), new UpdateOptions().upsert(true)));
            } else {
                models.add(new InsertOneModel<>(new Document("_id", i).append("v", i % 7)));
            }
        }
        return models;
    }
}
