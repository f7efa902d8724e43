package io.github.mongowriteguard.faults;

import com.mongodb.client.model.BulkWriteOptions;
import com.mongodb.client.model.WriteModel;
import com.mongodb.reactivestreams.client.MongoClient;
import com.mongodb.reactivestreams.client.MongoClients;
import io.github.mongowriteguard.GuardedReactiveCollection;
import io.github.mongowriteguard.WriteGuard;
import io.github.mongowriteguard.outcome.WriteOutcome;
import java.util.List;
import org.bson.Document;
import reactor.core.publisher.Mono;

/**
 * A client of the Reactive Streams driver that writes through the reactive guard
 * ({@link GuardedReactiveCollection#of}): the same guard settings as {@link GuardedWriter}, {@code execute}'s published
 * outcome as the claim of each write (awaited by the suite's client thread, as an application's reactive chain would
 * go on with it); an error signal instead of an outcome is a claim of "not applied", as a thrown one is.
 */
final class ReactiveGuardedWriter implements Writer {
    private final MongoClient client;
    private final GuardedReactiveCollection<Document> collection;

    ReactiveGuardedWriter(String connectionString, FaultConfig config) {
        WriteGuard guard = GuardedWriter.guard(config);
        this.client = MongoClients.create(
                guard.configure(Writer.settings(connectionString, config)).build());
        this.collection = GuardedReactiveCollection.of(
                guard, client, client.getDatabase(Workload.DATABASE).getCollection(Workload.COLLECTION));
    }

    @Override
    public void run(Operation operation, int order, Ledger ledger) {
        List<WriteModel<Document>> models =
                operation.writes().stream().map(Write::model).toList();
        WriteOutcome<Document> outcome;
        try {
            outcome = Mono.from(collection.execute(models, new BulkWriteOptions().ordered(operation.ordered())))
                    .block();
        } catch (RuntimeException e) {
            GuardedWriter.recordThrown(operation, order, ledger, e);
            return;
        }
        if (outcome == null) {
            GuardedWriter.recordThrown(
                    operation, order, ledger, new IllegalStateException("execute completed without an outcome"));
            return;
        }
        GuardedWriter.record(operation, order, ledger, outcome);
    }

    @Override
    public void close() {
        client.close();
    }
}
