package io.github.mongowriteguard;

import static org.assertj.core.api.Assertions.assertThat;

import com.mongodb.MongoClientSettings;
import com.mongodb.client.MongoClient;
import com.mongodb.client.MongoClients;
import com.mongodb.client.MongoCollection;
import com.mongodb.client.model.Filters;
import com.mongodb.client.result.InsertManyResult;
import com.mongodb.client.result.InsertOneResult;
import com.mongodb.event.CommandListener;
import com.mongodb.event.CommandStartedEvent;
import io.github.mongowriteguard.testkit.EmulatedCluster;
import io.github.mongowriteguard.testkit.EmulatedReplicaSet;
import io.github.mongowriteguard.testkit.EmulatedShardedCluster;
import io.github.mongowriteguard.testkit.sharding.ShardKey;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.function.Function;
import org.bson.BsonDocument;
import org.bson.BsonObjectId;
import org.bson.BsonReader;
import org.bson.BsonString;
import org.bson.BsonValue;
import org.bson.BsonWriter;
import org.bson.Document;
import org.bson.codecs.Codec;
import org.bson.codecs.DecoderContext;
import org.bson.codecs.EncoderContext;
import org.bson.codecs.configuration.CodecRegistries;
import org.bson.codecs.configuration.CodecRegistry;
import org.bson.codecs.pojo.PojoCodecProvider;
import org.bson.codecs.pojo.annotations.BsonId;
import org.bson.codecs.pojo.annotations.BsonProperty;
import org.bson.types.ObjectId;
import org.junit.jupiter.api.Test;

/**
 * Typed collections inserted with a null id: the raw driver sends an {@code _id} it generated while encoding (driver-core
 * {@code IdHoldingBsonWriter}: a new ObjectId after the document's fields, or the id a POJO codec put into the object)
 * and returns it as {@code insertedId}; the guard assigns the same kind of {@code _id} before the first send, sends it
 * where the driver does, returns it, and resends the same document. Records, a POJO, a custom codec; ids null and set,
 * {@code @BsonId}, {@code @BsonProperty}.
 */
class TypedIdsTest {

    public record StringIdOrder(
            @BsonId String id, @BsonProperty("sku") String item, int qty) {}

    public record ObjectIdOrder(@BsonId ObjectId id, String item) {}

    /** A POJO: the driver's POJO codec generates an ObjectId into {@code id} when it encodes a document to insert. */
    public static final class PojoOrder {
        private ObjectId id;
        private String item;

        public PojoOrder() {}

        PojoOrder(String item) {
            this.item = item;
        }

        public ObjectId getId() {
            return id;
        }

        public void setId(ObjectId id) {
            this.id = id;
        }

        public String getItem() {
            return item;
        }

        public void setItem(String item) {
            this.item = item;
        }
    }

    /** A value with a hand-written codec that is not a {@code CollectibleCodec} and writes no {@code _id}. */
    record Reading(String sensor, int value) {}

    static final class ReadingCodec implements Codec<Reading> {
        @Override
        public void encode(BsonWriter writer, Reading reading, EncoderContext context) {
            writer.writeStartDocument();
            writer.writeString("sensor", reading.sensor());
            writer.writeInt32("value", reading.value());
            writer.writeEndDocument();
        }

        @Override
        public Reading decode(BsonReader reader, DecoderContext context) {
            throw new UnsupportedOperationException("the test reads Documents");
        }

        @Override
        public Class<Reading> getEncoderClass() {
            return Reading.class;
        }
    }

    private static final CodecRegistry REGISTRY = CodecRegistries.fromRegistries(
            CodecRegistries.fromCodecs(new ReadingCodec()),
            MongoClientSettings.getDefaultCodecRegistry(),
            CodecRegistries.fromProviders(
                    PojoCodecProvider.builder().automatic(true).build()));

    private static final class Sides implements AutoCloseable {
        final List<BsonDocument> rawSent = new CopyOnWriteArrayList<>();
        final MongoClient raw;
        final GuardFixture fixture;

        Sides(String connectionString) {
            raw = MongoClients.create(MongoClientSettings.builder()
                    .applyConnectionString(new com.mongodb.ConnectionString(connectionString))
                    .addCommandListener(new CommandListener() {
                        @Override
                        public void commandStarted(CommandStartedEvent event) {
                            if (event.getCommandName().equals("insert")) {
                                rawSent.add(event.getCommand().clone());
                            }
                        }
                    })
                    .build());
            fixture = new GuardFixture(connectionString, 3_000);
        }

        <T> MongoCollection<T> raw(String name, Class<T> type) {
            return raw.getDatabase("typed").getCollection(name, type).withCodecRegistry(REGISTRY);
        }

        <T> GuardedCollection<T> guarded(String name, Class<T> type) {
            return fixture.wrap(fixture.client
                    .getDatabase("typed")
                    .getCollection(name, type)
                    .withCodecRegistry(REGISTRY));
        }

        Document stored(String name, BsonValue id) {
            return raw.getDatabase("typed")
                    .getCollection(name)
                    .find(Filters.eq("_id", id))
                    .first();
        }

        @Override
        public void close() {
            raw.close();
            fixture.close();
        }
    }

    /** Field names and BSON types of the one inserted document, in order: what must match the driver's statement. */
    private static List<String> shape(BsonDocument insertCommand) {
        BsonDocument document = insertCommand.getArray("documents").get(0).asDocument();
        List<String> shape = new ArrayList<>();
        document.forEach((name, value) -> shape.add(name + ":" + value.getBsonType()));
        return shape;
    }

    private static <T> void insertsWithoutId_likeTheDriver(Sides sides, String name, Class<T> type, T document) {
        InsertOneResult rawResult = sides.raw(name + "_raw", type).insertOne(document);
        sides.fixture.sent.clear();
        InsertOneResult guardedResult = sides.guarded(name, type).insertOne(document);

        assertThat(rawResult.getInsertedId()).isInstanceOf(BsonObjectId.class);
        assertThat(guardedResult.getInsertedId()).as(name).isInstanceOf(BsonObjectId.class);
        assertThat(shape(sides.fixture.sent.get(0)))
                .as("%s: the guard's statement against the driver's", name)
                .isEqualTo(shape(sides.rawSent.get(sides.rawSent.size() - 1)));
        Document stored = sides.stored(name, guardedResult.getInsertedId());
        Document storedByDriver = sides.stored(name + "_raw", rawResult.getInsertedId());
        assertThat(stored).as(name).isNotNull();
        assertThat(storedByDriver).as(name).isNotNull();
        // The same document as the driver's, field order included, but for the _id's value.
        assertThat(new ArrayList<>(stored.keySet())).isEqualTo(new ArrayList<>(storedByDriver.keySet()));
        stored.remove("_id");
        storedByDriver.remove("_id");
        assertThat(stored).isEqualTo(storedByDriver);
    }

    private static void allTypes(Sides sides) {
        insertsWithoutId_likeTheDriver(
                sides, "stringIdRecord", StringIdOrder.class, new StringIdOrder(null, "apple", 2));
        insertsWithoutId_likeTheDriver(sides, "objectIdRecord", ObjectIdOrder.class, new ObjectIdOrder(null, "pear"));
        insertsWithoutId_likeTheDriver(sides, "reading", Reading.class, new Reading("t1", 21));
        PojoOrder pojo = new PojoOrder("plum");
        InsertOneResult pojoResult = sides.guarded("pojo", PojoOrder.class).insertOne(pojo);
        assertThat(pojo.getId()).isNotNull(); // as the driver's POJO codec does
        assertThat(pojoResult.getInsertedId()).isEqualTo(new BsonObjectId(pojo.getId()));
        assertThat(sides.stored("pojo", pojoResult.getInsertedId())).isNotNull();

        StringIdOrder withId = new StringIdOrder("o-1", "fig", 1);
        sides.raw("withId_raw", StringIdOrder.class).insertOne(withId);
        sides.fixture.sent.clear();
        InsertOneResult set = sides.guarded("withId", StringIdOrder.class).insertOne(withId);
        assertThat(set.getInsertedId()).isEqualTo(new BsonString("o-1"));
        assertThat(sides.fixture.sent.get(0).getArray("documents"))
                .isEqualTo(sides.rawSent.get(sides.rawSent.size() - 1).getArray("documents"));

        InsertManyResult many = sides.guarded("many", StringIdOrder.class)
                .insertMany(List.of(
                        new StringIdOrder(null, "a", 1),
                        new StringIdOrder(null, "b", 2),
                        new StringIdOrder("c", "c", 3)));
        assertThat(many.getInsertedIds()).hasSize(3);
        assertThat(many.getInsertedIds().get(0)).isInstanceOf(BsonObjectId.class);
        assertThat(many.getInsertedIds().get(2)).isEqualTo(new BsonString("c"));
        many.getInsertedIds()
                .values()
                .forEach(id -> assertThat(sides.stored("many", id)).isNotNull());
    }

    @Test
    void recordsPojosAndCustomCodecs_withNullIds_getTheDriversKindOfId_onAReplicaSet() {
        try (EmulatedReplicaSet cluster = EmulatedCluster.replicaSet().start();
                Sides sides = new Sides(cluster.connectionString())) {
            allTypes(sides);
        }
    }

    @Test
    void recordsPojosAndCustomCodecs_withNullIds_areReadableByTheirId_onAShardedCluster() {
        try (EmulatedShardedCluster cluster =
                        EmulatedCluster.sharded().shards(3).start();
                Sides sides = new Sides(cluster.connectionString())) {
            ShardKey hashedId = ShardKey.of(new BsonDocument("_id", new BsonString("hashed")));
            for (String name : List.of("stringIdRecord", "objectIdRecord", "reading", "pojo", "withId", "many")) {
                cluster.shardCollection("typed." + name, hashedId);
                cluster.shardCollection("typed." + name + "_raw", hashedId);
            }
            allTypes(sides);
        }
    }

    @Test
    void recordWithNullIdAfterARetryableError_isResentWithTheSameId_oneDocument() {
        try (EmulatedReplicaSet cluster = EmulatedCluster.replicaSet().start();
                Sides sides = new Sides(cluster.connectionString())) {
            sides.fixture.failOnceRetryably("insert");

            InsertOneResult result =
                    sides.guarded("retried", StringIdOrder.class).insertOne(new StringIdOrder(null, "kiwi", 1));

            Function<BsonDocument, BsonValue> sentId =
                    command -> command.getArray("documents").get(0).asDocument().get("_id");
            assertThat(sides.fixture.sent).hasSize(2);
            assertThat(sentId.apply(sides.fixture.sent.get(1)))
                    .isEqualTo(sentId.apply(sides.fixture.sent.get(0)))
                    .isEqualTo(result.getInsertedId());
            assertThat(sides.raw.getDatabase("typed").getCollection("retried").countDocuments())
                    .isEqualTo(1);
        }
    }
}
