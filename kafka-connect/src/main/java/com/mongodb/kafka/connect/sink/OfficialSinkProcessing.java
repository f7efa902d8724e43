package com.mongodb.kafka.connect.sink;

import com.mongodb.MongoNamespace;
import com.mongodb.client.model.WriteModel;
import com.mongodb.kafka.connect.sink.dlq.ErrorReporter;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import org.apache.kafka.connect.sink.SinkRecord;
import org.bson.BsonDocument;

/**
 * The official sink's record processing, reached from the guarded sink: this class lives in the official connector's
 * package only because the official classes it calls ({@code MongoSinkRecordProcessor},
 * {@code MongoProcessedSinkRecordData}, the topic config's error and rate-limit settings) are package-private. It
 * copies none of their code: it calls them and hands their results on. Connect loads a plugin's jars with one class
 * loader, so this class and the official jar share the package at run time.
 */
public final class OfficialSinkProcessing {

    /**
     * One record as the official sink turned it into a write.
     *
     * @param record    the record Connect delivered
     * @param namespace where the official namespace mapping sends it
     * @param config    its topic's configuration
     * @param model     the write the official processing made of it
     */
    public record ProcessedRecord(
            SinkRecord record, MongoNamespace namespace, MongoSinkTopicConfig config, WriteModel<BsonDocument> model) {}

    private OfficialSinkProcessing() {}

    /**
     * The official sink's batches: records converted, post-processed, given their id and write model (or handled by
     * the CDC handler), grouped by topic and namespace in record order, cut at {@code max.batch.size}; a record that
     * cannot be processed is reported to {@code reporter} (or thrown, per {@code errors.tolerance}), a CDC no-op left
     * out, exactly as the official sink does.
     *
     * @param records  the records of one {@code put}
     * @param config   the sink's configuration
     * @param reporter where records that cannot be processed go
     * @return the batches, in record order
     */
    public static List<List<ProcessedRecord>> batches(
            Collection<SinkRecord> records, MongoSinkConfig config, ErrorReporter reporter) {
        List<List<ProcessedRecord>> batches = new ArrayList<>();
        for (List<MongoProcessedSinkRecordData> batch :
                MongoSinkRecordProcessor.orderedGroupByTopicAndNamespace(records, config, reporter)) {
            List<ProcessedRecord> processed = new ArrayList<>(batch.size());
            for (MongoProcessedSinkRecordData data : batch) {
                processed.add(new ProcessedRecord(
                        data.getSinkRecord(), data.getNamespace(), data.getConfig(), data.getWriteModel()));
            }
            batches.add(processed);
        }
        return batches;
    }

    /**
     * Whether write failures of this topic are reported rather than thrown ({@code errors.tolerance=all} or
     * {@code mongo.errors.tolerance}).
     *
     * @param config the topic's configuration
     * @return true when failed records go to the errant record reporter
     */
    public static boolean toleratesErrors(MongoSinkTopicConfig config) {
        return config.tolerateErrors() || config.tolerateDataErrors();
    }

    /**
     * Whether failed records are logged ({@code errors.log.enable}).
     *
     * @param config the topic's configuration
     * @return true when the official sink would log them
     */
    public static boolean logsErrors(MongoSinkTopicConfig config) {
        return config.logErrors();
    }

    /**
     * The official sink's rate limiting after a batch ({@code rate.limiting.every.n}, {@code rate.limiting.timeout}):
     * counts the batch and sleeps when the limit is reached.
     *
     * @param config the topic's configuration
     * @throws InterruptedException when interrupted while sleeping
     */
    public static void afterBatch(MongoSinkTopicConfig config) throws InterruptedException {
        RateLimitSettings limit = config.getRateLimitSettings();
        if (limit.isTriggered()) {
            Thread.sleep(limit.getTimeoutMs());
        }
    }
}
