package io.github.mongowriteguard.testkit.engine;

import static org.assertj.core.api.Assertions.assertThat;

import com.mongodb.client.MongoClient;
import com.mongodb.client.MongoCollection;
import com.mongodb.client.model.Projections;
import com.mongodb.client.model.Sorts;
import io.github.mongowriteguard.testkit.Clients;
import io.github.mongowriteguard.testkit.EmulatedCluster;
import io.github.mongowriteguard.testkit.EmulatedReplicaSet;
import java.util.ArrayList;
import java.util.List;
import org.bson.Document;
import org.junit.jupiter.api.Test;

/**
 * Find projections with aggregation expressions, as 4.4+ servers evaluate them
 * ({@code src/mongo/db/query/projection_parser.cpp}: a value other than a number, a boolean, {@code $elemMatch},
 * {@code $slice} or {@code $meta} is an expression; a string not starting with {@code $} a literal).
 */
class FindProjectionsTest {

    @Test
    void expressionsFieldPathsAndLiterals_areEvaluated_withSortSkipLimitAndBatches() {
        try (EmulatedReplicaSet set = EmulatedCluster.replicaSet().start();
                MongoClient client = Clients.client(set.connectionString())) {
            MongoCollection<Document> orders = client.getDatabase("projections").getCollection("orders");
            for (int i = 1; i <= 5; i++) {
                orders.insertOne(new Document("_id", i)
                        .append("a", i)
                        .append("b", 10 * i)
                        .append("name", "n" + i));
            }

            List<Document> found = new ArrayList<>();
            orders.find(new Document("a", new Document("$gte", 2)))
                    .projection(new Document("total", new Document("$add", List.of("$a", "$b")))
                            .append("label", new Document("$concat", List.of("$name", "-", "x")))
                            .append("kind", "order")
                            .append("copy", "$a")
                            .append("name", 1))
                    .sort(Sorts.descending("a"))
                    .skip(1)
                    .limit(3)
                    .batchSize(1)
                    .into(found);

            assertThat(found)
                    .containsExactly(
                            Document.parse("{_id: 4, name: 'n4', total: 44, label: 'n4-x', kind: 'order', copy: 4}"),
                            Document.parse("{_id: 3, name: 'n3', total: 33, label: 'n3-x', kind: 'order', copy: 3}"),
                            Document.parse("{_id: 2, name: 'n2', total: 22, label: 'n2-x', kind: 'order', copy: 2}"));
            assertThat(orders.find(new Document("_id", 1))
                            .projection(Projections.fields(
                                    Projections.excludeId(),
                                    Projections.computed("sum", new Document("$add", List.of("$a", 1)))))
                            .first())
                    .isEqualTo(new Document("sum", 2));
        }
    }
}
