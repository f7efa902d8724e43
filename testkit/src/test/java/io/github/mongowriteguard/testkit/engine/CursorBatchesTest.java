package io.github.mongowriteguard.testkit.engine;

import static org.assertj.core.api.Assertions.assertThat;

import com.mongodb.ConnectionString;
import com.mongodb.MongoClientSettings;
import com.mongodb.client.MongoClient;
import com.mongodb.event.CommandListener;
import com.mongodb.event.CommandStartedEvent;
import com.mongodb.reactivestreams.client.FindPublisher;
import io.github.mongowriteguard.testkit.Clients;
import io.github.mongowriteguard.testkit.EmulatedCluster;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.function.Function;
import java.util.function.Supplier;
import java.util.stream.IntStream;
import java.util.stream.Stream;
import org.bson.BsonDocument;
import org.bson.BsonInt32;
import org.bson.BsonInt64;
import org.bson.BsonString;
import org.bson.Document;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;
import org.reactivestreams.Subscription;
import reactor.core.publisher.BaseSubscriber;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Sinks;

/**
 * A cursor read in several batches, as the drivers ask for them. The Reactive Streams driver sizes each batch from the
 * subscriber's demand, so its {@code find} carries a {@code batchSize} where the synchronous driver's has none; mongos
 * then reads the rest of that cursor with a {@code getMore} without {@code batchSize}, as the testkit's mongos did on
 * its scratch engine (the whole answer in one batch), and a client may send one too. The server takes a missing or zero {@code getMore} batch size
 * as "no limit" ({@code src/mongo/db/query/getmore_command.idl}: optional; {@code
 * src/mongo/db/commands/query_cmd/getmore_cmd.cpp}, {@code generateBatch}: "a batch size of 0 means there is no
 * limit"; mongos: {@code src/mongo/s/query/cluster_find.cpp}, {@code getBatchSize().value_or(0)} and {@code
 * FindCommon::enoughForGetMore}). mongo-java-server's cursor refused it ("Illegal number to return: 0").
 */
class CursorBatchesTest {
    private static final int DOCUMENTS = 1_500;
    private static final java.time.Duration TIMEOUT = java.time.Duration.ofSeconds(30);

    static Stream<Arguments> deployments() {
        return Stream.of(
                Arguments.of(
                        "sharded collection, 5 shards",
                        (Supplier<EmulatedCluster>)
                                () -> EmulatedCluster.sharded().shards(5).start(),
                        true),
                Arguments.of(
                        "unsharded collection, 5 shards",
                        (Supplier<EmulatedCluster>)
                                () -> EmulatedCluster.sharded().shards(5).start(),
                        false),
                Arguments.of(
                        "replica set",
                        (Supplier<EmulatedCluster>)
                                () -> EmulatedCluster.replicaSet().start(),
                        false),
                Arguments.of(
                        "standalone",
                        (Supplier<EmulatedCluster>)
                                () -> EmulatedCluster.standalone().start(),
                        false));
    }

    private static void seed(EmulatedCluster cluster, boolean sharded) {
        try (MongoClient client = Clients.client(cluster.connectionString())) {
            if (sharded) {
                client.getDatabase("admin")
                        .runCommand(new Document("shardCollection", "shop.items")
                                .append("key", new Document("_id", "hashed")));
            }
            client.getDatabase("shop")
                    .getCollection("items")
                    .insertMany(IntStream.range(0, DOCUMENTS)
                            .mapToObj(i -> new Document("_id", i).append("n", i))
                            .toList());
        }
    }

    private static MongoClientSettings settings(EmulatedCluster cluster, List<BsonDocument> sent) {
        return MongoClientSettings.builder()
                .applyConnectionString(new ConnectionString(cluster.connectionString()))
                .applyToClusterSettings(c -> c.serverSelectionTimeout(10, TimeUnit.SECONDS))
                .addCommandListener(new CommandListener() {
                    @Override
                    public void commandStarted(CommandStartedEvent event) {
                        if (event.getCommandName().equals("find")
                                || event.getCommandName().equals("getMore")) {
                            sent.add(event.getCommand().clone());
                        }
                    }
                })
                .build();
    }

    /** The documents {@code read} gets from a find on the seeded collection through the Reactive Streams driver. */
    private static List<Document> readReactively(
            EmulatedCluster cluster, List<BsonDocument> sent, Function<FindPublisher<Document>, List<Document>> read) {
        try (com.mongodb.reactivestreams.client.MongoClient client =
                com.mongodb.reactivestreams.client.MongoClients.create(settings(cluster, sent))) {
            return read.apply(client.getDatabase("shop").getCollection("items").find());
        }
    }

    private static void assertEveryDocument(List<Document> all) {
        assertThat(all).hasSize(DOCUMENTS);
        assertThat(all).extracting(d -> d.getInteger("n")).doesNotHaveDuplicates();
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("deployments")
    void reactiveFind_unboundedDemand_readsEveryDocument(
            String name, Supplier<EmulatedCluster> start, boolean sharded) {
        try (EmulatedCluster cluster = start.get()) {
            seed(cluster, sharded);
            List<BsonDocument> sent = new CopyOnWriteArrayList<>();

            assertEveryDocument(readReactively(
                    cluster, sent, find -> Flux.from(find).collectList().block(TIMEOUT)));
        }
    }

    /** A demand of 64 at a time: a find with batchSize 64, then getMores. */
    @ParameterizedTest(name = "{0}")
    @MethodSource("deployments")
    void reactiveFind_smallDemand_readsEveryDocumentInBatches(
            String name, Supplier<EmulatedCluster> start, boolean sharded) {
        try (EmulatedCluster cluster = start.get()) {
            seed(cluster, sharded);
            List<BsonDocument> sent = new CopyOnWriteArrayList<>();

            assertEveryDocument(readReactively(
                    cluster,
                    sent,
                    find -> Flux.from(find).limitRate(64).collectList().block(TIMEOUT)));
            assertThat(sent.get(0).getNumber("batchSize").intValue()).isEqualTo(64);
        }
    }

    /** Ten documents first (a find with batchSize 10), then the rest. */
    @ParameterizedTest(name = "{0}")
    @MethodSource("deployments")
    void reactiveFind_demandBecomesUnbounded_readsTheRest(
            String name, Supplier<EmulatedCluster> start, boolean sharded) {
        try (EmulatedCluster cluster = start.get()) {
            seed(cluster, sharded);
            List<BsonDocument> sent = new CopyOnWriteArrayList<>();

            assertEveryDocument(readReactively(cluster, sent, find -> {
                List<Document> all = new CopyOnWriteArrayList<>();
                Sinks.Empty<Void> done = Sinks.empty();
                find.subscribe(new BaseSubscriber<Document>() {
                    @Override
                    protected void hookOnSubscribe(Subscription subscription) {
                        request(10);
                    }

                    @Override
                    protected void hookOnNext(Document document) {
                        all.add(document);
                        if (all.size() == 10) {
                            requestUnbounded();
                        }
                    }

                    @Override
                    protected void hookOnComplete() {
                        done.tryEmitEmpty();
                    }

                    @Override
                    protected void hookOnError(Throwable error) {
                        done.tryEmitError(error);
                    }
                });
                done.asMono().block(TIMEOUT);
                return all;
            }));
            assertThat(sent.get(0).getNumber("batchSize").intValue()).isEqualTo(10);
        }
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("deployments")
    void syncFind_batchSizeZero_readsEveryDocument(String name, Supplier<EmulatedCluster> start, boolean sharded) {
        try (EmulatedCluster cluster = start.get()) {
            seed(cluster, sharded);
            try (MongoClient client =
                    com.mongodb.client.MongoClients.create(settings(cluster, new CopyOnWriteArrayList<>()))) {
                assertEveryDocument(client.getDatabase("shop")
                        .getCollection("items")
                        .find()
                        .batchSize(0)
                        .into(new ArrayList<>()));
            }
        }
    }

    /** The commands themselves: {@code getMore} without a batch size and with {@code batchSize: 0}. */
    @ParameterizedTest(name = "{0}")
    @MethodSource("deployments")
    void getMore_noOrZeroBatchSize_returnsTheRest(String name, Supplier<EmulatedCluster> start, boolean sharded) {
        try (EmulatedCluster cluster = start.get()) {
            seed(cluster, sharded);
            try (MongoClient client = Clients.client(cluster.connectionString())) {
                for (BsonInt32 batchSize : new BsonInt32[] {null, new BsonInt32(0)}) {
                    BsonDocument first = client.getDatabase("shop")
                            .runCommand(
                                    new BsonDocument("find", new BsonString("items"))
                                            .append("batchSize", new BsonInt32(5)),
                                    BsonDocument.class);
                    BsonDocument cursor = first.getDocument("cursor");
                    int read = cursor.getArray("firstBatch").size();
                    long id = cursor.getNumber("id").longValue();
                    while (id != 0) {
                        BsonDocument getMore = new BsonDocument("getMore", new BsonInt64(id))
                                .append("collection", new BsonString("items"));
                        if (batchSize != null) {
                            getMore.append("batchSize", batchSize);
                        }
                        cursor = client.getDatabase("shop")
                                .runCommand(getMore, BsonDocument.class)
                                .getDocument("cursor");
                        read += cursor.getArray("nextBatch").size();
                        id = cursor.getNumber("id").longValue();
                    }

                    assertThat(read).as("batchSize %s", batchSize).isEqualTo(DOCUMENTS);
                }
            }
        }
    }
}
