package io.github.mongowriteguard.faults;

import com.mongodb.client.MongoClient;
import com.mongodb.client.MongoClients;
import com.mongodb.client.model.BulkWriteOptions;
import com.mongodb.client.model.WriteModel;
import io.github.mongowriteguard.GuardedCollection;
import io.github.mongowriteguard.WriteGuard;
import io.github.mongowriteguard.WriteGuardSettings;
import io.github.mongowriteguard.outcome.IndexOutcome;
import io.github.mongowriteguard.outcome.WriteOutcome;
import io.github.mongowriteguard.retry.RetryPolicy;
import java.time.Duration;
import java.util.List;
import org.bson.Document;

/**
 * A client that writes through the guard: {@code execute} (never a second call: the guard's own 3 attempts are the
 * retries), the outcome of each index as the claim.
 */
final class GuardedWriter implements Writer {
    private final MongoClient client;
    private final GuardedCollection<Document> collection;

    GuardedWriter(String connectionString, FaultConfig config) {
        WriteGuard guard = guard(config);
        this.client = MongoClients.create(
                guard.configure(Writer.settings(connectionString, config)).build());
        this.collection = guard.guardCollection(
                client, client.getDatabase(Workload.DATABASE).getCollection(Workload.COLLECTION));
    }

    /** The guard both guarded writers use: the run's server deadline, 3 attempts, a short backoff and gate grace. */
    static WriteGuard guard(FaultConfig config) {
        return WriteGuard.create(WriteGuardSettings.builder()
                .serverDeadline(config.serverDeadline())
                .retryPolicy(RetryPolicy.builder()
                        .maxAttempts(3)
                        .initialBackoff(Duration.ofMillis(20))
                        .gateGrace(Duration.ofMillis(50))
                        .build())
                .build());
    }

    @Override
    public void run(Operation operation, int order, Ledger ledger) {
        List<WriteModel<Document>> models =
                operation.writes().stream().map(Write::model).toList();
        WriteOutcome<Document> outcome;
        try {
            outcome = collection.execute(models, new BulkWriteOptions().ordered(operation.ordered()));
        } catch (RuntimeException e) {
            recordThrown(operation, order, ledger, e);
            return;
        }
        record(operation, order, ledger, outcome);
    }

    /**
     * {@code execute} must return (or publish) a complete outcome; a caller that gets an exception has none and takes
     * it for a failure: every write of the operation is claimed not applied.
     */
    static void recordThrown(Operation operation, int order, Ledger ledger, RuntimeException e) {
        for (Write write : operation.writes()) {
            ledger.record(
                    new Ledger.Entry(write, operation, order, Claim.NOT_APPLIED, false, false, "execute threw " + e));
        }
    }

    /** The claim of each write of {@code operation}: its index's status in the outcome. */
    static void record(Operation operation, int order, Ledger ledger, WriteOutcome<Document> outcome) {
        boolean writeConcernError = outcome.writeConcernError() != null;
        for (int i = 0; i < operation.writes().size(); i++) {
            IndexOutcome index = outcome.outcome(i);
            Claim claim = switch (index.status()) {
                case APPLIED -> Claim.APPLIED;
                case UNKNOWN -> Claim.UNKNOWN;
                case FAILED -> index.mayHaveChangedDocuments() ? Claim.PARTIAL : Claim.NOT_APPLIED;
                case SKIPPED, SUPERSEDED -> Claim.NOT_APPLIED; // the suite never sets lastWriteWins
            };
            ledger.record(new Ledger.Entry(
                    operation.writes().get(i),
                    operation,
                    order,
                    claim,
                    index.retrySafe(),
                    claim == Claim.APPLIED && writeConcernError,
                    index.toString() + (index.retrySafe() ? " retrySafe" : "")));
        }
    }

    @Override
    public void close() {
        client.close();
    }
}
