package io.github.mongowriteguard.internal.plan;

import static org.assertj.core.api.Assertions.assertThat;

import com.mongodb.client.model.DeleteOneModel;
import io.github.mongowriteguard.bulk.WriteKind;
import java.util.HashMap;
import java.util.Map;
import java.util.Random;
import org.bson.BsonDocument;
import org.bson.BsonInt32;
import org.bson.BsonInt64;
import org.bson.BsonString;
import org.bson.BsonValue;
import org.junit.jupiter.api.Test;

class KeyTableTest {

    /**
     * The table keeps only some bits of each key's hash beside the write's index: keys whose hashes are equal ("Aa" and
     * "BB" have the same String hash), or share those bits, still get numbers of their own, and equal keys of other
     * types (1 and 1L) one number, exactly as {@link IdKey} compares them.
     */
    @Test
    void numbersKeysAsIdKeyComparesThem_whateverTheirHashesShare() {
        int writes = 70_000; // 17 bits for the index, 15 for the hash
        Random random = new Random(28);
        WriteFacts[] facts = new WriteFacts[writes];
        for (int i = 0; i < writes; i++) {
            BsonValue id = switch (random.nextInt(5)) {
                case 0 -> new BsonString(random.nextBoolean() ? "Aa" : "BB"); // one String hash
                case 1 -> new BsonString(random.nextBoolean() ? "AaAa" : "BBBB"); // one String hash
                case 2 -> new BsonInt32(random.nextInt(20_000));
                case 3 -> new BsonInt64(random.nextInt(20_000)); // the same keys as case 2
                default ->
                    new BsonDocument("a", new BsonInt32(random.nextInt(20_000)))
                            .append("b", new BsonString("x" + random.nextInt(3)));
            };
            facts[i] = new WriteFacts(i, new DeleteOneModel<>(new BsonDocument("_id", id)), WriteKind.DELETE_ONE);
            facts[i].keyBy(id);
        }

        KeyTable table = new KeyTable(writes);
        table.numberKeys(facts);

        Map<IdKey, Integer> expected = new HashMap<>();
        for (WriteFacts write : facts) {
            int number = expected.computeIfAbsent(IdKey.of(write.id), key -> expected.size());
            assertThat(write.keyNumber)
                    .as("key number of write %d", write.index)
                    .isEqualTo(number);
        }
        assertThat(table.count()).isEqualTo(expected.size());
    }
}
