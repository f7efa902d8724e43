package io.github.mongowriteguard.faults;

import com.mongodb.MongoBulkWriteException;
import com.mongodb.MongoException;
import com.mongodb.bulk.BulkWriteError;
import com.mongodb.client.MongoClient;
import com.mongodb.client.MongoClients;
import com.mongodb.client.MongoCollection;
import com.mongodb.client.model.BulkWriteOptions;
import com.mongodb.client.model.WriteModel;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import org.bson.Document;

/**
 * The baseline: the raw driver ({@code retryWrites} on, its default) and an application loop of 3 attempts, each a
 * {@code bulkWrite} of freshly built models (an insert gets a new {@code _id} per attempt, as when the application
 * rebuilds the document from its message). The claim is the last attempt's: success is APPLIED; a
 * {@code MongoBulkWriteException} says which indices failed (and, ordered, which were not attempted); any other
 * exception makes every write NOT_APPLIED, as an application that dead-letters on failure assumes.
 */
final class RawWriter implements Writer {
    private static final int ATTEMPTS = 3;
    private final MongoClient client;
    private final MongoCollection<Document> collection;

    RawWriter(String connectionString, FaultConfig config) {
        this.client =
                MongoClients.create(Writer.settings(connectionString, config).build());
        this.collection = client.getDatabase(Workload.DATABASE).getCollection(Workload.COLLECTION);
    }

    @Override
    public void run(Operation operation, int order, Ledger ledger) {
        MongoException last = null;
        for (int attempt = 1; attempt <= ATTEMPTS; attempt++) {
            List<WriteModel<Document>> models =
                    operation.writes().stream().map(Write::model).toList();
            try {
                collection.bulkWrite(
                        models,
                        new BulkWriteOptions().ordered(operation.ordered()).comment("raw:" + operation.id()));
                for (Write write : operation.writes()) {
                    ledger.record(new Ledger.Entry(
                            write, operation, order, Claim.APPLIED, false, false, "attempt " + attempt + " succeeded"));
                }
                return;
            } catch (MongoException e) {
                last = e;
                sleep(20L * attempt);
            }
        }
        Set<Integer> failed = new HashSet<>();
        int firstError = Integer.MAX_VALUE;
        boolean writeConcernError = false;
        if (last instanceof MongoBulkWriteException bulk) {
            for (BulkWriteError error : bulk.getWriteErrors()) {
                failed.add(error.getIndex());
                firstError = Math.min(firstError, error.getIndex());
            }
            writeConcernError = bulk.getWriteConcernError() != null;
        } else {
            firstError = -1;
        }
        for (int i = 0; i < operation.writes().size(); i++) {
            boolean applied = !failed.contains(i) && (operation.ordered() ? i < firstError : firstError >= 0);
            ledger.record(new Ledger.Entry(
                    operation.writes().get(i),
                    operation,
                    order,
                    applied ? Claim.APPLIED : Claim.NOT_APPLIED,
                    false,
                    applied && writeConcernError,
                    "3 attempts; the last: " + last.getClass().getSimpleName() + " " + last.getCode()));
        }
    }

    private static void sleep(long millis) {
        try {
            TimeUnit.MILLISECONDS.sleep(millis);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    @Override
    public void close() {
        client.close();
    }
}
