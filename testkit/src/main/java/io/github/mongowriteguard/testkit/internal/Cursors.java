package io.github.mongowriteguard.testkit.internal;

import java.util.ArrayList;
import java.util.List;
import java.util.function.BiFunction;
import org.bson.BsonDocument;
import org.bson.BsonInt64;
import org.bson.BsonString;
import org.bson.BsonValue;

/** Reading a whole cursor inside the emulator (scratch engines, shard engines). Not an API. */
public final class Cursors {
    private Cursors() {}

    /**
     * Every document of a cursor reply ({@code find}, {@code aggregate}), following it with {@code getMore} until it
     * is exhausted.
     *
     * @param run runs a command against a database: {@code (database, command) -> reply}
     */
    public static List<BsonValue> drain(
            BiFunction<String, BsonDocument, BsonDocument> run, String database, BsonDocument reply) {
        BsonDocument cursor = reply.getDocument("cursor");
        List<BsonValue> all = new ArrayList<>(cursor.getArray("firstBatch"));
        long id = cursor.getNumber("id").longValue();
        while (id != 0) {
            String ns = cursor.getString("ns").getValue();
            BsonDocument more = run.apply(
                    database,
                    new BsonDocument("getMore", new BsonInt64(id))
                            .append("collection", new BsonString(ns.substring(ns.indexOf('.') + 1))));
            cursor = more.getDocument("cursor");
            all.addAll(cursor.getArray("nextBatch"));
            id = cursor.getNumber("id").longValue();
        }
        return all;
    }
}
