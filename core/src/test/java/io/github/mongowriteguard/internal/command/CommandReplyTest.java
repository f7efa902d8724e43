package io.github.mongowriteguard.internal.command;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Random;
import org.bson.BsonArray;
import org.bson.BsonDocument;
import org.bson.BsonInt32;
import org.bson.BsonInt64;
import org.bson.BsonString;
import org.bson.BsonValue;
import org.bson.RawBsonDocument;
import org.bson.codecs.BsonDocumentCodec;
import org.junit.jupiter.api.Test;

/**
 * A write command's reply read as mongod and mongos write it: the upserted {@code _id} of each statement position,
 * whatever order the reply lists them in.
 */
class CommandReplyTest {

    @Test
    void noUpsert_hasNoId() {
        CommandReply reply = read(new BsonDocument("ok", new BsonInt32(1)).append("n", new BsonInt32(3)));
        assertThat(reply.n()).isEqualTo(3);
        assertThat(reply.upsertedCount()).isZero();
        assertThat(reply.upsertedId(0)).isNull();
    }

    @Test
    void upsertsInAnyOrder_areFoundByPosition() {
        Random random = new Random(42);
        for (int trial = 0; trial < 200; trial++) {
            int statements = 1 + random.nextInt(300);
            List<Integer> positions = new ArrayList<>();
            for (int position = 0; position < statements; position++) {
                if (random.nextInt(3) > 0) {
                    positions.add(position);
                }
            }
            if (random.nextBoolean()) {
                Collections.shuffle(positions, random); // as a reply merged from several shards may list them
            }
            BsonArray upserted = new BsonArray();
            for (int position : positions) {
                upserted.add(new BsonDocument("index", index(position, random)).append("_id", id(position)));
            }
            CommandReply reply = read(new BsonDocument("ok", new BsonInt32(1))
                    .append("n", new BsonInt32(statements))
                    .append("upserted", upserted)
                    .append("nModified", new BsonInt32(0)));
            assertThat(reply.upsertedCount()).isEqualTo(positions.size());
            for (int position = -1; position <= statements; position++) {
                assertThat(reply.upsertedId(position))
                        .as("trial %d, position %d", trial, position)
                        .isEqualTo(positions.contains(position) ? id(position) : null);
            }
        }
    }

    @Test
    void anIndexListedTwice_keepsItsLastId() {
        BsonArray upserted = new BsonArray(List.of(
                new BsonDocument("index", new BsonInt32(2)).append("_id", new BsonString("first")),
                new BsonDocument("index", new BsonInt32(0)).append("_id", new BsonString("zero")),
                new BsonDocument("index", new BsonInt32(2)).append("_id", new BsonString("last"))));
        CommandReply reply = read(new BsonDocument("ok", new BsonInt32(1)).append("upserted", upserted));
        assertThat(reply.upsertedCount()).isEqualTo(2);
        assertThat(reply.upsertedId(0)).isEqualTo(new BsonString("zero"));
        assertThat(reply.upsertedId(2)).isEqualTo(new BsonString("last"));
    }

    private static BsonValue index(int position, Random random) {
        // int32 from mongod; int64 from some mongos versions
        return random.nextBoolean() ? new BsonInt32(position) : new BsonInt64(position);
    }

    private static BsonValue id(int position) {
        return new BsonDocument("productId", new BsonInt32(position)).append("storeId", new BsonString("s" + position));
    }

    private static CommandReply read(BsonDocument reply) {
        return CommandReply.of(new RawBsonDocument(reply, new BsonDocumentCodec()));
    }
}
