package io.github.mongowriteguard.testkit.engine;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.mongodb.MongoCommandException;
import com.mongodb.client.MongoClient;
import com.mongodb.client.MongoCollection;
import com.mongodb.client.model.Filters;
import io.github.mongowriteguard.testkit.Clients;
import io.github.mongowriteguard.testkit.EmulatedCluster;
import io.github.mongowriteguard.testkit.EmulatedReplicaSet;
import java.util.ArrayList;
import java.util.List;
import org.bson.Document;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * {@code $regexFind}, {@code $regexFindAll} and {@code $regexMatch} as mongod evaluates them
 * ({@code src/mongo/db/exec/expression/evaluate_regex.cpp}, 4.4 {@code src/mongo/db/pipeline/expression.cpp}: {@code {match, idx, captures}}, an unmatched
 * group {@code null}, a null input giving {@code null}/{@code []}/{@code false}, 51104 for a non-string input), in
 * {@code aggregate}, in a pipeline update and in a find projection.
 */
class RegexExpressionsTest {
    private static EmulatedReplicaSet set;
    private static MongoClient client;
    private static MongoCollection<Document> mails;

    @BeforeAll
    static void start() {
        set = EmulatedCluster.replicaSet().start();
        client = Clients.client(set.connectionString());
        mails = client.getDatabase("regex").getCollection("mails");
        mails.insertMany(List.of(
                new Document("_id", 1).append("to", "ann@example.com, bob@test.org"),
                new Document("_id", 2).append("to", "nobody"),
                new Document("_id", 3).append("to", null),
                new Document("_id", 4).append("to", 7)));
    }

    @AfterAll
    static void stop() {
        client.close();
        set.close();
    }

    @Test
    void regexFind_andFindAll_andMatch_inAggregate() {
        List<Document> found = new ArrayList<>();
        mails.aggregate(List.of(
                        Document.parse("{$match: {_id: {$lte: 3}}}"),
                        Document.parse("{$project: {"
                                + "first: {$regexFind: {input: '$to', regex: '(\\\\w+)@(\\\\w+)(x)?'}},"
                                + "all: {$regexFindAll: {input: '$to', regex: /@([a-z]+)/}},"
                                + "test: {$regexMatch: {input: '$to', regex: 'EXAMPLE', options: 'i'}}}}"),
                        Document.parse("{$sort: {_id: 1}}")))
                .into(found);

        assertThat(found.get(0))
                .isEqualTo(Document.parse("{_id: 1,"
                        + " first: {match: 'ann@example', idx: 0, captures: ['ann', 'example', null]},"
                        + " all: [{match: '@example', idx: 3, captures: ['example']},"
                        + "       {match: '@test', idx: 20, captures: ['test']}],"
                        + " test: true}"));
        assertThat(found.get(1)).isEqualTo(Document.parse("{_id: 2, first: null, all: [], test: false}"));
        assertThat(found.get(2)).isEqualTo(Document.parse("{_id: 3, first: null, all: [], test: false}"));

        List<Document> matched = new ArrayList<>();
        mails.aggregate(List.of(
                        Document.parse("{$match: {$expr: {$regexMatch: {input: {$toString: '$to'}, regex: '^no'}}}}")))
                .into(matched);
        assertThat(matched).extracting(d -> d.get("_id")).containsExactly(2);
    }

    @Test
    void aNonStringInput_isError51104() {
        assertThatThrownBy(() -> mails.aggregate(List.of(
                                Document.parse("{$match: {_id: 4}}"),
                                Document.parse("{$project: {m: {$regexMatch: {input: '$to', regex: 'x'}}}}")))
                        .first())
                .isInstanceOfSatisfying(MongoCommandException.class, e -> {
                    assertThat(e.getErrorCode()).isEqualTo(51104);
                    assertThat(e.getErrorMessage()).isEqualTo("$regexMatch needs 'input' to be of type string");
                });
    }

    @Test
    void inAPipelineUpdate_andAFindProjection() {
        MongoCollection<Document> users = client.getDatabase("regex").getCollection("users");
        users.insertOne(new Document("_id", 1).append("email", "carl@shop.example"));

        users.updateOne(
                Filters.eq("_id", 1),
                List.of(Document.parse("{$set: {domain: {$regexFind: {input: '$email', regex: '@(.*)$'}}}}")));
        assertThat(users.find().first().get("domain", Document.class).getList("captures", String.class))
                .containsExactly("shop.example");

        Document projected = users.find()
                .projection(Document.parse("{_id: 0, shop: {$regexMatch: {input: '$email', regex: 'shop'}}}"))
                .first();
        assertThat(projected).isEqualTo(new Document("shop", true));
    }
}
