package io.github.mongowriteguard.internal;

import com.mongodb.connection.ClusterDescription;
import com.mongodb.connection.ClusterType;
import com.mongodb.connection.ServerDescription;
import com.mongodb.selector.ServerSelector;
import java.util.List;
import org.jspecify.annotations.Nullable;

/**
 * What {@code WriteGuard.configure} read from one builder (immutable), and the marker by which
 * {@code WriteGuard.guardCollection} and {@code guardClient} recognise the client built from it ({@link ClientBindings}):
 * the builder's cluster-level server selector, which selects as the application's own one did (or keeps every server
 * offered, which is what no selector does). Compared by identity. Not API.
 */
public final class ClientBinding implements ServerSelector {
    /**
     * The server's refusal of a {@code txnNumber} on a standalone {@code mongod} (mongodb/mongo
     * {@code src/mongo/db/initialize_operation_session_info.cpp}, {@code initializeOperationSessionInfo}:
     * {@code IllegalOperation} (20), before the command runs).
     */
    public static final String STANDALONE_REFUSAL =
            "Transaction numbers are only allowed on a replica set member or mongos";

    private final @Nullable Long timeoutMs;
    private final int readTimeoutMs;
    private final @Nullable ServerSelector delegate;
    private final boolean retryWrites;
    /** Learned from the driver's cluster description (and from the server's refusal): a standalone mongod. */
    private volatile boolean standalone;
    /**
     * Learned from the driver's cluster description: a replica set or a standalone, so a {@code mongod} answers, not
     * mongos. Until then (and behind a load balancer, always mongos) an answer may be mongos'.
     */
    private volatile boolean mongod;

    public ClientBinding(@Nullable Long timeoutMs, int readTimeoutMs, @Nullable ServerSelector delegate) {
        this(timeoutMs, readTimeoutMs, delegate, true);
    }

    /**
     * What {@code configure} read from one builder.
     *
     * @param timeoutMs     the client's Client-Side Operation Timeout, or null
     * @param readTimeoutMs the socket read timeout, 0 for none
     * @param delegate      the application's own server selector, or null
     * @param retryWrites   the client's {@code retryWrites} setting: false sends no {@code txnNumber}, as the driver
     */
    public ClientBinding(
            @Nullable Long timeoutMs, int readTimeoutMs, @Nullable ServerSelector delegate, boolean retryWrites) {
        this.timeoutMs = timeoutMs;
        this.readTimeoutMs = readTimeoutMs;
        this.delegate = delegate;
        this.retryWrites = retryWrites;
    }

    /** The client's {@code retryWrites} setting. */
    public boolean retryWrites() {
        return retryWrites;
    }

    /**
     * Whether writes get a retryable-write identity ({@code lsid} and {@code txnNumber}), as the driver decides it
     * (driver-core {@code OperationHelper.isRetryableWrite}): {@code retryWrites} on, and the server not a standalone
     * {@code mongod}, which refuses a {@code txnNumber}.
     */
    public boolean sendsTxnNumber() {
        return retryWrites && !standalone;
    }

    /** Why writes are sent without a {@code txnNumber}, for an outcome's reason; empty when they are not. */
    public String noTxnNumberReason() {
        if (!retryWrites) {
            return "retryWrites=false in the client settings";
        }
        return standalone ? "the server is a standalone mongod, which has no retryable writes" : "";
    }

    /**
     * Whether the answers may come from mongos: false only once the driver's cluster description showed a replica set
     * or a standalone. mongos answers {@code MaxTimeMSExpired} for a shard's statements at its own deadline while the
     * shard may still apply them (mongodb/mongo {@code src/mongo/s/async_requests_sender.cpp},
     * {@code src/mongo/s/write_ops/batch_write_exec.cpp}), so such an answer proves nothing about them.
     */
    public boolean mayBeMongos() {
        return !mongod;
    }

    /** The server refused a {@code txnNumber} ({@link #STANDALONE_REFUSAL}): it is a standalone. */
    public void refusedTxnNumber() {
        standalone = true;
    }

    /** Whether {@code error} is a standalone's refusal of a {@code txnNumber}, which proves the command did not run. */
    public static boolean isStandaloneRefusal(com.mongodb.MongoException error) {
        return error.getCode() == 20
                && error.getMessage() != null
                && error.getMessage().contains(STANDALONE_REFUSAL);
    }

    public @Nullable Long timeoutMs() {
        return timeoutMs;
    }

    public int readTimeoutMs() {
        return readTimeoutMs;
    }

    /** The application's own server selector, or null for none. */
    public @Nullable ServerSelector delegate() {
        return delegate;
    }

    @Override
    public List<ServerDescription> select(ClusterDescription clusterDescription) {
        // Every server selection of the client passes here with the cluster's description: the cluster type the driver
        // decides retryable writes by. Written only when it changes.
        ClusterType type = clusterDescription.getType();
        boolean direct = type == ClusterType.REPLICA_SET || type == ClusterType.STANDALONE;
        if (direct != mongod && (direct || type == ClusterType.SHARDED || type == ClusterType.LOAD_BALANCED)) {
            mongod = direct;
        }
        if (type == ClusterType.STANDALONE && !standalone) {
            standalone = true;
        } else if (standalone && (type == ClusterType.REPLICA_SET || type == ClusterType.SHARDED)) {
            standalone = false;
        }
        return delegate == null ? clusterDescription.getServerDescriptions() : delegate.select(clusterDescription);
    }

    @Override
    public String toString() {
        return delegate == null ? "WriteGuard(no server selector)" : "WriteGuard(" + delegate + ")";
    }
}
