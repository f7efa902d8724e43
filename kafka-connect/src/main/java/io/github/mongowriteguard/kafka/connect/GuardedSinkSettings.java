package io.github.mongowriteguard.kafka.connect;

import io.github.mongowriteguard.WriteGuardSettings;
import io.github.mongowriteguard.retry.RetryPolicy;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeSet;
import org.apache.kafka.common.config.AbstractConfig;
import org.apache.kafka.common.config.ConfigDef;
import org.apache.kafka.common.config.ConfigDef.Importance;
import org.apache.kafka.common.config.ConfigDef.Type;
import org.apache.kafka.common.config.ConfigException;

/**
 * The settings the guarded sink adds to the official sink's, all under {@value #PREFIX}: immutable, validated when the
 * connector and each task start. A setting under the prefix that this class does not define is refused (with the list
 * of those it does), never ignored.
 */
public final class GuardedSinkSettings {

    /** The prefix of every setting the guarded sink adds. */
    public static final String PREFIX = "mongo.write-guard.";

    /** The server deadline ({@code maxTimeMS}) of every write, in ms; unset: a fraction of the socket timeout. */
    public static final String SERVER_DEADLINE_MS = PREFIX + "server-deadline.ms";

    /** The fraction of the socket read timeout used as the server deadline when none is set. */
    public static final String SERVER_DEADLINE_FRACTION = PREFIX + "server-deadline-fraction";

    /** {@code true}: an ordered batch is the driver's ORDERED bulk, stopping at its first failure. */
    public static final String STRICT_ORDERED = PREFIX + "strict-ordered";

    /** How many per-shard commands of one ordered batch are sent side by side. */
    public static final String PARALLEL_SHARD_COMMANDS = PREFIX + "parallel-shard-commands";

    /** How many partitions of one {@code put} are written side by side, at most (each partition's bulks in order). */
    public static final String PARALLEL_PARTITIONS = PREFIX + "parallel-partitions";

    /** The default of {@value #PARALLEL_PARTITIONS}: a put's partitions up to this many are written at once. */
    public static final int DEFAULT_PARALLEL_PARTITIONS = 16;

    /** The highest {@value #PARALLEL_PARTITIONS} accepted (each partition written at once holds a connection). */
    public static final int MAX_PARALLEL_PARTITIONS = 64;

    /** Attempts of one write (the same server copy each time) within one {@code put}. */
    public static final String RETRY_MAX_ATTEMPTS = PREFIX + "retry.max-attempts";

    /** How long one {@code put} or {@code close} settles UNKNOWN writes before it hands the batch back to Connect. */
    public static final String SETTLE_MAX_WAIT_MS = PREFIX + "settle.max-wait.ms";

    /** How long a task that was given a partition waits for a previous owner's copies still running on the server. */
    public static final String FENCE_MAX_WAIT_MS = PREFIX + "fence.max-wait.ms";

    /** The database of the sink's progress documents ({@value ProgressStore#COLLECTION}); default: {@code database}. */
    public static final String PROGRESS_DATABASE = PREFIX + "progress.database";

    /** The definition of these settings, as Connect's REST API and {@code validate} show them. */
    public static final ConfigDef CONFIG = new ConfigDef()
            .define(
                    SERVER_DEADLINE_MS,
                    Type.LONG,
                    null,
                    Importance.MEDIUM,
                    "The server deadline (maxTimeMS) of every write, in milliseconds. Unset: "
                            + "mongo.write-guard.server-deadline-fraction of the connection's socketTimeoutMS "
                            + "(10 s without one).")
            .define(
                    SERVER_DEADLINE_FRACTION,
                    Type.DOUBLE,
                    WriteGuardSettings.DEFAULT_SERVER_DEADLINE_FRACTION,
                    Importance.LOW,
                    "The fraction of socketTimeoutMS used as the server deadline, above 0 and below 1.")
            .define(
                    STRICT_ORDERED,
                    Type.BOOLEAN,
                    false,
                    Importance.LOW,
                    "true: a batch with bulk.write.ordered=true is the driver's ORDERED bulk (one round trip per "
                            + "change of shard, stopping at the first failure). false (default): ordered per key.")
            .define(
                    PARALLEL_SHARD_COMMANDS,
                    Type.INT,
                    WriteGuardSettings.DEFAULT_PARALLEL_SHARD_COMMANDS,
                    ConfigDef.Range.between(1, WriteGuardSettings.MAX_PARALLEL_SHARD_COMMANDS),
                    Importance.LOW,
                    "How many per-shard commands of one ordered batch the guard sends side by side.")
            .define(
                    PARALLEL_PARTITIONS,
                    Type.INT,
                    DEFAULT_PARALLEL_PARTITIONS,
                    ConfigDef.Range.between(1, MAX_PARALLEL_PARTITIONS),
                    Importance.LOW,
                    "How many partitions of one put the task writes side by side, at most (threads of the task's "
                            + "own, as many as the put has partitions up to this number); within a partition, its "
                            + "writes stay in record order. 1: the partitions one after another.")
            .define(
                    RETRY_MAX_ATTEMPTS,
                    Type.INT,
                    RetryPolicy.defaults().getMaxAttempts(),
                    ConfigDef.Range.between(1, 100),
                    Importance.LOW,
                    "Attempts of one write within one put; every attempt is the same server copy.")
            .define(
                    SETTLE_MAX_WAIT_MS,
                    Type.LONG,
                    30_000L,
                    ConfigDef.Range.between(0, 25 * 60_000L),
                    Importance.LOW,
                    "How long one put (or a close of partitions) settles writes whose outcome is UNKNOWN, with the "
                            + "same server copy, before it hands the batch back to Connect as a RetriableException.")
            .define(
                    FENCE_MAX_WAIT_MS,
                    Type.LONG,
                    60_000L,
                    ConfigDef.Range.between(0, 25 * 60_000L),
                    Importance.LOW,
                    "How long a task given a partition waits for copies of the partition's previous owner still "
                            + "running on the server (currentOp, by the copies' comment) before it writes.")
            .define(
                    PROGRESS_DATABASE,
                    Type.STRING,
                    null,
                    Importance.LOW,
                    "The database of the collection " + ProgressStore.COLLECTION + ", where a task that hands a batch "
                            + "back to Connect records which of its records are done, for the partition's next owner. "
                            + "Default: the sink's 'database' setting.");

    private final WriteGuardSettings guardSettings;
    private final Duration settleMaxWait;
    private final Duration fenceMaxWait;
    private final int parallelPartitions;

    private GuardedSinkSettings(
            WriteGuardSettings guardSettings, Duration settleMaxWait, Duration fenceMaxWait, int parallelPartitions) {
        this.guardSettings = guardSettings;
        this.settleMaxWait = settleMaxWait;
        this.fenceMaxWait = fenceMaxWait;
        this.parallelPartitions = parallelPartitions;
    }

    /**
     * Reads and validates the guard's settings from a connector's or task's configuration (other keys are the
     * official sink's and left to it).
     *
     * @param props the connector's configuration
     * @return the validated settings
     * @throws ConfigException naming the setting and the fix, before anything is sent
     */
    public static GuardedSinkSettings from(Map<String, String> props) {
        List<String> unknown = new ArrayList<>();
        for (String key : props.keySet()) {
            if (key.startsWith(PREFIX) && !CONFIG.names().contains(key)) {
                unknown.add(key);
            }
        }
        if (!unknown.isEmpty()) {
            throw new ConfigException("Unknown guarded-sink setting(s) " + unknown + ": the guarded sink refuses "
                    + "settings under '" + PREFIX + "' that it does not define. Remove them or use one of "
                    + new TreeSet<>(CONFIG.names()) + ".");
        }
        AbstractConfig config = new AbstractConfig(CONFIG, props, false);
        WriteGuardSettings.Builder builder = WriteGuardSettings.builder();
        try {
            Long deadline = config.getLong(SERVER_DEADLINE_MS);
            if (deadline != null) {
                if (deadline <= 0) {
                    throw new ConfigException(
                            SERVER_DEADLINE_MS,
                            deadline,
                            "must be above 0 ms; remove it to use " + SERVER_DEADLINE_FRACTION
                                    + " of the socket timeout");
                }
                builder.serverDeadline(Duration.ofMillis(deadline));
            }
            builder.serverDeadlineFraction(config.getDouble(SERVER_DEADLINE_FRACTION));
            builder.strictOrdered(config.getBoolean(STRICT_ORDERED));
            builder.parallelShardCommands(config.getInt(PARALLEL_SHARD_COMMANDS));
            builder.retryPolicy(RetryPolicy.builder()
                    .maxAttempts(config.getInt(RETRY_MAX_ATTEMPTS))
                    .build());
            return new GuardedSinkSettings(
                    builder.build(),
                    Duration.ofMillis(config.getLong(SETTLE_MAX_WAIT_MS)),
                    Duration.ofMillis(config.getLong(FENCE_MAX_WAIT_MS)),
                    config.getInt(PARALLEL_PARTITIONS));
        } catch (IllegalArgumentException e) {
            throw new ConfigException("Invalid guarded-sink setting: " + e.getMessage());
        }
    }

    /**
     * The database of the progress documents: {@value #PROGRESS_DATABASE}, else the sink's {@code database}.
     *
     * @param props the connector's configuration
     * @return the database name
     * @throws ConfigException when neither is set
     */
    public String getProgressDatabase(Map<String, String> props) {
        String database = props.get(PROGRESS_DATABASE);
        if (database == null || database.isBlank()) {
            database = props.get("database");
        }
        if (database == null || database.isBlank()) {
            throw new ConfigException(
                    PROGRESS_DATABASE,
                    database,
                    "the guarded sink needs a database for its progress " + "documents: set " + PROGRESS_DATABASE
                            + " (or the sink's 'database')");
        }
        return database;
    }

    /**
     * The guard's settings.
     *
     * @return the settings the task's {@code WriteGuard} is built with
     */
    public WriteGuardSettings getGuardSettings() {
        return guardSettings;
    }

    /**
     * How long a put or close settles UNKNOWN writes.
     *
     * @return the settle window
     */
    public Duration getSettleMaxWait() {
        return settleMaxWait;
    }

    /**
     * How many partitions of one put are written side by side, at most.
     *
     * @return at least 1
     */
    public int getParallelPartitions() {
        return parallelPartitions;
    }

    /**
     * How long a new owner of a partition waits for its previous owner's running copies.
     *
     * @return the fence window
     */
    public Duration getFenceMaxWait() {
        return fenceMaxWait;
    }
}
