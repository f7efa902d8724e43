package io.github.mongowriteguard.kafka.connect;

import static com.mongodb.kafka.connect.util.ServerApiConfig.setServerApi;
import static com.mongodb.kafka.connect.util.SslConfigs.setupSsl;

import com.mongodb.MongoClientSettings;
import com.mongodb.MongoException;
import com.mongodb.MongoNamespace;
import com.mongodb.WriteError;
import com.mongodb.client.MongoClient;
import com.mongodb.client.MongoClients;
import com.mongodb.client.model.BulkWriteOptions;
import com.mongodb.client.model.WriteModel;
import com.mongodb.kafka.connect.sink.MongoSinkConfig;
import com.mongodb.kafka.connect.sink.MongoSinkTopicConfig;
import com.mongodb.kafka.connect.sink.OfficialSinkProcessing;
import com.mongodb.kafka.connect.sink.OfficialSinkProcessing.ProcessedRecord;
import com.mongodb.kafka.connect.sink.dlq.ErrorReporter;
import com.mongodb.kafka.connect.sink.dlq.WriteException;
import com.mongodb.kafka.connect.sink.dlq.WriteSkippedException;
import com.mongodb.kafka.connect.util.TimeseriesValidation;
import io.github.mongowriteguard.GuardedCollection;
import io.github.mongowriteguard.WriteGuard;
import io.github.mongowriteguard.copies.StatementIds;
import io.github.mongowriteguard.outcome.IndexOutcome;
import io.github.mongowriteguard.outcome.WriteOutcome;
import io.github.mongowriteguard.outcome.WriteStatus;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.CancellationException;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Future;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.connect.errors.ConnectException;
import org.apache.kafka.connect.errors.DataException;
import org.apache.kafka.connect.errors.RetriableException;
import org.apache.kafka.connect.sink.ErrantRecordReporter;
import org.apache.kafka.connect.sink.SinkRecord;
import org.apache.kafka.connect.sink.SinkTask;
import org.bson.BsonDocument;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The guarded sink's task: the official sink turns the records into writes ({@link OfficialSinkProcessing}), the
 * guard writes them, and what the guard proves decides each record:
 *
 * <ul>
 *   <li>APPLIED: done;
 *   <li>FAILED for good (a write error that a new attempt would meet again), or not sent because the write before it
 *       on its key failed for good in an ordered batch: reported alone to the errant record reporter (or the task
 *       fails, per {@code errors.tolerance});
 *   <li>UNKNOWN: settled with the same server copy ({@code WriteGuard.settle}) within
 *       {@value GuardedSinkSettings#SETTLE_MAX_WAIT_MS}; still UNKNOWN, it is held, and the batch goes back to Connect
 *       as a {@link RetriableException}: the redelivered batch settles the held copies first and never writes them
 *       again as new copies;
 *   <li>FAILED but safe to send again (a transient error, nothing applied) or never sent: sent again as a new write
 *       when Connect redelivers the batch, after a {@link RetriableException}; records already applied or reported are
 *       left out of the redelivered batch's write.
 * </ul>
 *
 * Offsets follow outcomes: {@link #preCommit} commits a partition only up to its first record that is neither done
 * nor reported. The partitions of one batch are written side by side on the task's own threads (at most
 * {@value GuardedSinkSettings#PARALLEL_PARTITIONS}), each partition's bulks in order; what each bulk proved is decided on
 * the task's thread, partition by partition. Every record's write carries the server identity its partition and offset give it
 * ({@link PartitionStatements}), so whichever task sends a record again (this one, the partition's next owner after a
 * crash) is answered from the server's statement record when it already applied.
 */
public class GuardedMongoSinkTask extends SinkTask {
    private static final Logger LOGGER = LoggerFactory.getLogger(GuardedMongoSinkTask.class);
    private static final Duration RETRY_BACKOFF = Duration.ofMillis(500);

    private MongoSinkConfig sinkConfig;
    private GuardedSinkSettings settings;
    private MongoClient client;
    private WriteGuard guard;
    private CopyFence fence;
    private ErrorReporter reporter;
    private final Map<MongoNamespace, GuardedCollection<BsonDocument>> collections = new HashMap<>();
    private final Set<MongoNamespace> checkedTimeseries = new HashSet<>();

    /** Records of the batch Connect will deliver again that are applied or reported: never written again. */
    private final Set<RecordId> done = new HashSet<>();
    /** Per partition, the first record of the unfinished batch that is neither applied nor reported. */
    private final Map<TopicPartition, Long> firstPending = new HashMap<>();
    /** Batches with UNKNOWN writes still running or not yet settled: settled before anything else is written. */
    private final List<Held> held = new ArrayList<>();
    /** Partitions given to this task whose previous owner's progress is not read yet. */
    private final Set<TopicPartition> unread = new HashSet<>();
    /** Partitions with a progress document this task wrote or read, removed when a put of theirs completes. */
    private final Set<TopicPartition> withProgress = new HashSet<>();

    private ProgressStore progress;
    /** The connector's name: part of every partition's logical session id. */
    private String connector;
    /** Partitions given to this task whose previous owner's copies may still run: checked before the first write. */
    private final Map<TopicPartition, Instant> fenced = new LinkedHashMap<>();
    /** The task's own threads, one per partition written at once; shut down in {@link #stop}. */
    private ThreadPoolExecutor writers;

    private record Held(
            GuardedCollection<BsonDocument> collection,
            WriteOutcome<BsonDocument> outcome,
            List<ProcessedRecord> batch,
            boolean ordered) {}

    /** A record's fate as its write's outcome proves it, before the task applies it. */
    private enum Fate {
        DONE,
        PENDING,
        UNKNOWN,
        FAILED
    }

    private record Verdict(ProcessedRecord record, Fate fate, Exception error) {}

    /** One guarded bulk of a partition's group, sent and settled within the window, with its records' verdicts. */
    private record Sent(List<ProcessedRecord> group, WriteOutcome<BsonDocument> outcome, List<Verdict> verdicts) {}

    /**
     * A partition's writes of one batch: its bulks sent, in order; the records left for the redelivery behind a bulk
     * that left a record not done; the exception that ended the partition's writes, if one did.
     */
    private record PartitionRun(List<Sent> sent, List<ProcessedRecord> notSent, RuntimeException error) {}

    /** A task Connect instantiates by its class name. */
    public GuardedMongoSinkTask() {}

    @Override
    public String version() {
        return Versions.version();
    }

    @Override
    public void start(Map<String, String> props) {
        try {
            settings = GuardedSinkSettings.from(props);
            sinkConfig = new MongoSinkConfig(props);
            guard = WriteGuard.builder().settings(settings.getGuardSettings()).build();
            MongoClientSettings.Builder builder = MongoClientSettings.builder()
                    .applyConnectionString(sinkConfig.getConnectionString())
                    .applyToSslSettings(ssl -> setupSsl(ssl, sinkConfig));
            if (sinkConfig.getCustomCredentialProvider() != null) {
                builder.credential(
                        sinkConfig.getCustomCredentialProvider().getCustomCredential(sinkConfig.getOriginals()));
            }
            setServerApi(builder, sinkConfig);
            client = MongoClients.create(guard.configure(builder).build());
            connector = props.getOrDefault("name", "guarded-mongo-sink");
            fence = new CopyFence(client, connector);
            progress = new ProgressStore(client, settings.getProgressDatabase(props), connector);
            reporter = errorReporter();
            writers = writers(connector, settings.getParallelPartitions());
        } catch (RuntimeException e) {
            if (client != null) {
                client.close();
            }
            throw new ConnectException("Failed to start the guarded MongoDB sink task: " + e.getMessage(), e);
        }
    }

    private static ThreadPoolExecutor writers(String connector, int size) {
        AtomicInteger count = new AtomicInteger();
        ThreadPoolExecutor pool =
                new ThreadPoolExecutor(size, size, 60, TimeUnit.SECONDS, new LinkedBlockingQueue<>(), runnable -> {
                    Thread thread = new Thread(
                            runnable, "mwg-connect-" + connector + "-partition-writer-" + count.incrementAndGet());
                    thread.setDaemon(true);
                    return thread;
                });
        pool.allowCoreThreadTimeOut(true);
        return pool;
    }

    private ErrorReporter errorReporter() {
        ErrantRecordReporter errant = context != null ? context.errantRecordReporter() : null;
        if (errant == null) {
            LOGGER.info("No errant record reporter configured: failed records are only logged");
            return (record, e) -> {};
        }
        return errant::report;
    }

    @Override
    public void open(Collection<TopicPartition> partitions) {
        Instant now = Instant.now();
        for (TopicPartition partition : partitions) {
            fenced.putIfAbsent(partition, now);
            unread.add(partition);
        }
    }

    @Override
    public void close(Collection<TopicPartition> partitions) {
        if (!held.isEmpty()) {
            try {
                settleHeld();
            } catch (RuntimeException e) {
                LOGGER.warn("Settling UNKNOWN writes on close failed: {}", e.toString());
            }
        }
        if (!done.isEmpty()) {
            saveProgress(); // what the last settle proved, for the partitions' next owner
        }
        Set<TopicPartition> closed = new HashSet<>(partitions);
        done.removeIf(id -> closed.contains(id.partition()));
        firstPending.keySet().removeAll(closed);
        fenced.keySet().removeAll(closed);
        unread.removeAll(closed);
        withProgress.removeAll(closed);
        held.removeIf(h -> {
            boolean ofClosed = h.batch().stream()
                    .anyMatch(r -> closed.contains(RecordId.of(r.record()).partition()));
            if (ofClosed) {
                LOGGER.warn(
                        "Partition(s) {} closed while writes of theirs are still UNKNOWN on the server ({}): the next "
                                + "owner waits for them to end before it writes (see the copy fence)",
                        closed,
                        h.outcome().stillRunning().size());
            }
            return ofClosed;
        });
    }

    @Override
    public Map<TopicPartition, OffsetAndMetadata> preCommit(Map<TopicPartition, OffsetAndMetadata> currentOffsets) {
        Map<TopicPartition, OffsetAndMetadata> committable = new HashMap<>();
        for (Map.Entry<TopicPartition, OffsetAndMetadata> entry : currentOffsets.entrySet()) {
            Long pending = firstPending.get(entry.getKey());
            if (pending != null && pending < entry.getValue().offset()) {
                committable.put(entry.getKey(), new OffsetAndMetadata(pending));
            } else {
                committable.put(entry.getKey(), entry.getValue());
            }
        }
        return committable;
    }

    @Override
    public void put(Collection<SinkRecord> records) {
        if (records.isEmpty()) {
            return;
        }
        if (!held.isEmpty()) {
            settleHeld();
            if (!held.isEmpty()) {
                retryLater("writes whose outcome is UNKNOWN are still being settled with their server copies");
            }
        }
        checkFence(records);
        readProgress(records);

        List<SinkRecord> fresh = new ArrayList<>(records.size());
        for (SinkRecord record : records) {
            if (!done.contains(RecordId.of(record))) {
                fresh.add(record);
            }
        }
        List<List<ProcessedRecord>> batches = OfficialSinkProcessing.batches(fresh, sinkConfig, (record, e) -> {
            reporter.report(record, e);
            done.add(RecordId.of(record));
        });
        Set<RecordId> pending = new HashSet<>();
        for (List<ProcessedRecord> batch : batches) {
            // a later batch may hold later writes of a partition left pending: they wait for the redelivery
            Set<TopicPartition> waiting = new HashSet<>();
            pending.forEach(id -> waiting.add(id.partition()));
            List<ProcessedRecord> toWrite = new ArrayList<>(batch.size());
            for (ProcessedRecord record : batch) {
                RecordId id = RecordId.of(record.record());
                if (waiting.contains(id.partition())) {
                    pending.add(id);
                } else {
                    toWrite.add(record);
                }
            }
            if (!toWrite.isEmpty()) {
                writeBatch(toWrite, pending);
            }
        }
        if (pending.isEmpty() && held.isEmpty()) {
            done.clear();
            firstPending.clear();
            for (TopicPartition partition : withProgress) {
                progress.clear(partition);
            }
            withProgress.clear();
            return;
        }
        firstPending.clear();
        for (RecordId id : pending) {
            firstPending.merge(id.partition(), id.offset(), Math::min);
        }
        saveProgress();
        retryLater(pending.size() + " record(s) not yet applied (a transient failure, a write not sent, or an "
                + "UNKNOWN outcome being settled)");
    }

    /** Leaves out of this put the records a previous owner of a newly given partition applied or reported. */
    private void readProgress(Collection<SinkRecord> records) {
        if (unread.isEmpty()) {
            return;
        }
        Set<TopicPartition> present = new HashSet<>();
        for (SinkRecord record : records) {
            TopicPartition partition = RecordId.of(record).partition();
            if (unread.contains(partition)) {
                present.add(partition);
            }
        }
        for (TopicPartition partition : present) {
            Set<Long> offsets = progress.done(partition);
            if (!offsets.isEmpty()) {
                LOGGER.info(
                        "Partition {}: {} record(s) already applied or reported by a previous owner are left out",
                        partition,
                        offsets.size());
                offsets.forEach(offset -> done.add(new RecordId(partition, offset)));
                withProgress.add(partition);
            }
            unread.remove(partition);
        }
    }

    /** Before the batch goes back to Connect: what is done, per partition, for whoever is delivered it next. */
    private void saveProgress() {
        Map<TopicPartition, List<Long>> byPartition = new HashMap<>();
        for (RecordId id : done) {
            byPartition.computeIfAbsent(id.partition(), p -> new ArrayList<>()).add(id.offset());
        }
        for (Map.Entry<TopicPartition, List<Long>> entry : byPartition.entrySet()) {
            try {
                progress.save(entry.getKey(), entry.getValue());
                withProgress.add(entry.getKey());
            } catch (MongoException e) {
                LOGGER.warn(
                        "Could not record the progress of partition {} ({}): if the partition moves before this batch "
                                + "completes, its next owner writes its {} applied record(s) again",
                        entry.getKey(),
                        e.getCode(),
                        entry.getValue().size());
            }
        }
    }

    private void retryLater(String why) {
        if (context != null) {
            context.timeout(RETRY_BACKOFF.toMillis());
        }
        throw new RetriableException("The guarded MongoDB sink hands the batch back to Connect: " + why
                + "; the records already applied or reported are not written again");
    }

    private void checkFence(Collection<SinkRecord> records) {
        if (fenced.isEmpty()) {
            return;
        }
        Set<TopicPartition> present = new HashSet<>();
        for (SinkRecord record : records) {
            TopicPartition partition = RecordId.of(record).partition();
            if (fenced.containsKey(partition)) {
                present.add(partition);
            }
        }
        if (present.isEmpty()) {
            return;
        }
        List<String> running;
        try {
            running = fence.runningCopies(present);
        } catch (MongoException e) {
            Instant since =
                    present.stream().map(fenced::get).min(Instant::compareTo).orElseThrow();
            Duration wait = blindWait();
            if (Instant.now().isBefore(since.plus(wait))) {
                LOGGER.warn(
                        "Cannot read currentOp ({}): waiting one server deadline ({}) before writing partition(s) {}, "
                                + "so that a previous owner's copies have ended; grant the 'inprog' action to see them",
                        e.getCode(),
                        wait,
                        present);
                retryLater("currentOp cannot be read: waiting one server deadline for a previous owner's copies");
            }
            running = List.of();
        }
        if (running.isEmpty()) {
            fenced.keySet().removeAll(present);
            return;
        }
        Instant since =
                present.stream().map(fenced::get).min(Instant::compareTo).orElseThrow();
        if (Instant.now().isAfter(since.plus(settings.getFenceMaxWait()))) {
            throw new ConnectException("A previous owner's copies of partition(s) " + present + " still run on the "
                    + "server after " + settings.getFenceMaxWait() + ": " + running + ". The task does not write "
                    + "beside them (a second copy could apply a record twice). Kill them (killOp) or raise "
                    + GuardedSinkSettings.FENCE_MAX_WAIT_MS + ", then restart the task.");
        }
        LOGGER.info("Partition(s) {}: waiting for a previous owner's copies still running: {}", present, running);
        retryLater("a previous owner's copies of partition(s) " + present + " still run on the server");
    }

    private Duration blindWait() {
        Integer socketTimeout = sinkConfig.getConnectionString().getSocketTimeout();
        return settings.getGuardSettings()
                .resolveServerDeadline(
                        socketTimeout == null || socketTimeout == 0 ? null : Duration.ofMillis(socketTimeout));
    }

    private void writeBatch(List<ProcessedRecord> batch, Set<RecordId> pending) {
        ProcessedRecord first = batch.get(0);
        MongoSinkTopicConfig config = first.config();
        boolean ordered = config.getBoolean(MongoSinkTopicConfig.BULK_WRITE_ORDERED_CONFIG);
        GuardedCollection<BsonDocument> collection = collection(first.namespace());
        if (config.isTimeseries() && checkedTimeseries.add(first.namespace())) {
            // as the official sink: a time series collection is checked (and created) before its first write
            TimeseriesValidation.validateCollection(client, first.namespace(), config);
        }
        Instant deadline = Instant.now().plus(settings.getSettleMaxWait());
        List<ProcessedRecord> toWrite = batch;
        // records never applied (not sent, or a transient failure) are sent again as new writes, in record order, while
        // nothing of the batch is UNKNOWN and the settle window lasts; what is left goes back to Connect
        for (int attempt = 0; ; attempt++) {
            Set<RecordId> left = new HashSet<>();
            boolean unknown = writeOnce(collection, toWrite, ordered, config, deadline, left);
            if (left.isEmpty() || unknown || attempt >= 2 || !Instant.now().isBefore(deadline)) {
                pending.addAll(left);
                break;
            }
            List<ProcessedRecord> again = new ArrayList<>();
            for (ProcessedRecord record : toWrite) {
                if (left.contains(RecordId.of(record.record()))) {
                    again.add(record);
                }
            }
            toWrite = again;
            sleep(RETRY_BACKOFF);
        }
        try {
            OfficialSinkProcessing.afterBatch(config);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new DataException("Rate limiting was interrupted", e);
        }
    }

    /**
     * The batch as one guarded bulk per (partition, block) of its records ({@link PartitionStatements}), each write
     * sent with its record's statement identity, so that a record whichever owner sent before is answered from the
     * server's statement record instead of applied again. The partitions are written side by side (their sessions
     * differ; Kafka orders only a partition), each partition's groups in order on one of the task's threads. After a
     * group leaves a record not done, the partition's later groups wait for the redelivery (their writes may follow it
     * on a key, and a later block sent first would make the earlier block's transaction number too old). The verdicts
     * are applied here, on the task's thread. True when UNKNOWN writes are left held.
     */
    private boolean writeOnce(
            GuardedCollection<BsonDocument> collection,
            List<ProcessedRecord> batch,
            boolean ordered,
            MongoSinkTopicConfig config,
            Instant deadline,
            Set<RecordId> pending) {
        Map<TopicPartition, List<List<ProcessedRecord>>> byPartition = new LinkedHashMap<>();
        for (List<ProcessedRecord> group : PartitionStatements.groups(batch)) {
            TopicPartition partition = RecordId.of(group.get(0).record()).partition();
            byPartition.computeIfAbsent(partition, p -> new ArrayList<>()).add(group);
        }
        List<PartitionRun> runs = new ArrayList<>(byPartition.size());
        if (byPartition.size() == 1) {
            runs.add(writePartition(collection, byPartition.values().iterator().next(), ordered, config, deadline));
        } else {
            List<Future<PartitionRun>> futures = new ArrayList<>(byPartition.size());
            for (List<List<ProcessedRecord>> groups : byPartition.values()) {
                futures.add(writers.submit(() -> writePartition(collection, groups, ordered, config, deadline)));
            }
            for (Future<PartitionRun> future : futures) {
                runs.add(await(future, futures));
            }
        }
        boolean unknown = false;
        RuntimeException first = null;
        for (PartitionRun run : runs) {
            try {
                for (Sent sent : run.sent()) {
                    if (apply(sent.verdicts(), config, pending)) {
                        held.add(new Held(collection, sent.outcome(), sent.group(), ordered));
                        unknown = true;
                    }
                }
            } catch (RuntimeException e) { // a failure the connector does not tolerate: the task fails
                first = first == null ? e : first;
            }
            run.notSent().forEach(r -> pending.add(RecordId.of(r.record())));
            if (run.error() != null && first == null) {
                first = run.error();
            }
        }
        if (first != null) {
            throw first;
        }
        return unknown;
    }

    private static PartitionRun await(Future<PartitionRun> future, List<Future<PartitionRun>> all) {
        try {
            return future.get();
        } catch (InterruptedException e) {
            all.forEach(f -> f.cancel(true));
            Thread.currentThread().interrupt();
            throw new RetriableException("Interrupted while writing the batch's partitions", e);
        } catch (CancellationException e) {
            return new PartitionRun(List.of(), List.of(), new ConnectException("The task stopped while writing", e));
        } catch (ExecutionException e) {
            Throwable cause = e.getCause();
            RuntimeException error = cause instanceof RuntimeException re
                    ? re
                    : new ConnectException("Writing a partition failed: " + cause, cause);
            return new PartitionRun(List.of(), List.of(), error);
        }
    }

    /**
     * One partition's groups of a batch, in order, each sent and settled within the window; after a group that leaves
     * a record not done (or fails one the connector does not tolerate), the later groups are not sent. Touches no
     * state of the task: it runs on the task's threads.
     */
    private PartitionRun writePartition(
            GuardedCollection<BsonDocument> collection,
            List<List<ProcessedRecord>> groups,
            boolean ordered,
            MongoSinkTopicConfig config,
            Instant deadline) {
        List<Sent> sent = new ArrayList<>(groups.size());
        List<ProcessedRecord> notSent = new ArrayList<>();
        boolean tolerates = OfficialSinkProcessing.toleratesErrors(config);
        boolean stopped = false;
        for (List<ProcessedRecord> group : groups) {
            if (stopped) {
                notSent.addAll(group);
                continue;
            }
            Sent one;
            try {
                one = sendGroup(collection, group, ordered, deadline);
            } catch (RuntimeException e) {
                return new PartitionRun(sent, notSent, e);
            }
            sent.add(one);
            stopped = one.verdicts().stream()
                    .anyMatch(v -> v.fate() == Fate.PENDING
                            || v.fate() == Fate.UNKNOWN
                            || (v.fate() == Fate.FAILED && !tolerates));
        }
        return new PartitionRun(sent, notSent, null);
    }

    /** One guarded bulk of {@code group}, settled within the window, and what it proved of each record. */
    private Sent sendGroup(
            GuardedCollection<BsonDocument> collection,
            List<ProcessedRecord> group,
            boolean ordered,
            Instant deadline) {
        List<WriteModel<BsonDocument>> models = new ArrayList<>(group.size());
        Set<Integer> partitions = new TreeSet<>();
        for (ProcessedRecord record : group) {
            models.add(record.model());
            partitions.add(RecordId.of(record.record()).partition().partition());
        }
        BulkWriteOptions options = new BulkWriteOptions()
                .ordered(ordered)
                .comment(fence.comment(group.get(0).record().originalTopic(), partitions));
        WriteOutcome<BsonDocument> outcome;
        try {
            StatementIds ids = PartitionStatements.ids(connector, group);
            outcome = ids == null ? collection.execute(models, options) : collection.execute(models, options, ids);
        } catch (IllegalArgumentException | MongoException e) {
            // refused before anything was sent (bad input): no record of the group was applied
            MongoException error = e instanceof MongoException me ? me : new MongoException(e.getMessage(), e);
            List<Verdict> failed = new ArrayList<>(group.size());
            group.forEach(r -> failed.add(new Verdict(r, Fate.FAILED, error)));
            return new Sent(group, null, failed);
        }
        outcome = settleWithin(collection, outcome, deadline);
        return new Sent(group, outcome, verdicts(group, outcome, ordered));
    }

    /** Decides each record of a batch by its outcome; true when UNKNOWN writes remain to settle. */
    private boolean decide(
            List<ProcessedRecord> batch,
            WriteOutcome<BsonDocument> outcome,
            boolean ordered,
            MongoSinkTopicConfig config,
            Set<RecordId> pending) {
        return apply(verdicts(batch, outcome, ordered), config, pending);
    }

    /** Applies verdicts to the task: done, pending, reported (or the task fails); true when any is UNKNOWN. */
    private boolean apply(List<Verdict> verdicts, MongoSinkTopicConfig config, Set<RecordId> pending) {
        boolean unknown = false;
        for (Verdict verdict : verdicts) {
            RecordId id = RecordId.of(verdict.record().record());
            switch (verdict.fate()) {
                case DONE -> done.add(id);
                case PENDING -> pending.add(id);
                case UNKNOWN -> {
                    pending.add(id);
                    unknown = true;
                }
                case FAILED -> fail(verdict.record(), verdict.error(), config);
                default -> throw new IllegalStateException("Unexpected fate " + verdict.fate());
            }
        }
        return unknown;
    }

    /** What an outcome proves of each record of its batch (no state of the task read or written). */
    private static List<Verdict> verdicts(
            List<ProcessedRecord> batch, WriteOutcome<BsonDocument> outcome, boolean ordered) {
        List<Verdict> verdicts = new ArrayList<>(batch.size());
        for (IndexOutcome o : outcome.outcomes()) {
            ProcessedRecord record = batch.get(o.index());
            switch (o.status()) {
                case APPLIED -> verdicts.add(new Verdict(record, Fate.DONE, null));
                case FAILED ->
                    verdicts.add(
                            o.retrySafe()
                                    ? new Verdict(record, Fate.PENDING, null)
                                    : new Verdict(record, Fate.FAILED, new WriteException(writeError(o))));
                case SKIPPED -> {
                    IndexOutcome cause = o.relatedIndex() >= 0 ? outcome.outcome(o.relatedIndex()) : null;
                    if (ordered && cause != null && cause.status() == WriteStatus.FAILED && !cause.retrySafe()) {
                        // its key stopped at a failed write
                        verdicts.add(new Verdict(record, Fate.FAILED, new WriteSkippedException()));
                    } else {
                        verdicts.add(new Verdict(record, Fate.PENDING, null));
                    }
                }
                case UNKNOWN ->
                    verdicts.add(
                            o.settleable()
                                    ? new Verdict(record, Fate.UNKNOWN, null)
                                    : new Verdict(
                                            record,
                                            Fate.FAILED,
                                            new DataException("The write's outcome is UNKNOWN and cannot be settled ("
                                                    + o.message() + "): it may have been applied")));
                default ->
                    verdicts.add(
                            new Verdict(record, Fate.FAILED, new DataException("Unexpected outcome " + o.status())));
            }
        }
        return verdicts;
    }

    private static WriteError writeError(IndexOutcome o) {
        return new WriteError(
                o.errorCode(),
                o.message() != null ? o.message() : String.valueOf(o.codeName()),
                o.details() != null ? o.details() : new BsonDocument());
    }

    private void fail(ProcessedRecord record, Exception e, MongoSinkTopicConfig config) {
        RecordId id = RecordId.of(record.record());
        if (OfficialSinkProcessing.logsErrors(config)) {
            LOGGER.error(
                    "Failed to write the record at {}-{}@{}: {}",
                    id.partition().topic(),
                    id.partition().partition(),
                    id.offset(),
                    e.getMessage());
        }
        if (!OfficialSinkProcessing.toleratesErrors(config)) {
            throw new DataException("The record at " + id.partition() + "@" + id.offset() + " failed", e);
        }
        reporter.report(record.record(), e);
        done.add(id);
    }

    private WriteOutcome<BsonDocument> settleWithin(
            GuardedCollection<BsonDocument> collection, WriteOutcome<BsonDocument> outcome, Instant deadline) {
        WriteOutcome<BsonDocument> current = outcome;
        while (hasSettleable(current) && Instant.now().isBefore(deadline)) {
            current = collection.settle(current);
            if (hasSettleable(current)) {
                sleep(Duration.ofMillis(200));
            }
        }
        return current;
    }

    private static boolean hasSettleable(WriteOutcome<?> outcome) {
        return outcome.hasUnknown()
                && outcome.outcomes().stream().anyMatch(o -> o.status() == WriteStatus.UNKNOWN && o.settleable());
    }

    /** Settles the held batches; those settled are decided, those still UNKNOWN stay held. */
    private void settleHeld() {
        Instant deadline = Instant.now().plus(settings.getSettleMaxWait());
        List<Held> still = new ArrayList<>();
        for (Held h : List.copyOf(held)) {
            WriteOutcome<BsonDocument> settled = settleWithin(h.collection(), h.outcome(), deadline);
            if (decide(h.batch(), settled, h.ordered(), h.batch().get(0).config(), new HashSet<>())) {
                still.add(new Held(h.collection(), settled, h.batch(), h.ordered()));
            }
        }
        held.clear();
        held.addAll(still);
    }

    private GuardedCollection<BsonDocument> collection(MongoNamespace namespace) {
        return collections.computeIfAbsent(
                namespace,
                ns -> guard.guardCollection(
                        client,
                        client.getDatabase(ns.getDatabaseName())
                                .getCollection(ns.getCollectionName(), BsonDocument.class)));
    }

    private static void sleep(Duration duration) {
        try {
            Thread.sleep(duration.toMillis());
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new RetriableException("Interrupted while settling", e);
        }
    }

    @Override
    public void stop() {
        if (writers != null) {
            for (Runnable queued : writers.shutdownNow()) {
                if (queued instanceof Future<?> future) {
                    future.cancel(false); // a put waiting for it wakes
                }
            }
        }
        collections.clear();
        if (client != null) {
            client.close();
        }
    }
}
