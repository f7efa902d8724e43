package io.github.mongowriteguard.internal;

import com.mongodb.connection.ClusterDescription;
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
    private final @Nullable Long timeoutMs;
    private final int readTimeoutMs;
    private final @Nullable ServerSelector delegate;

    public ClientBinding(@Nullable Long timeoutMs, int readTimeoutMs, @Nullable ServerSelector delegate) {
        this.timeoutMs = timeoutMs;
        this.readTimeoutMs = readTimeoutMs;
        this.delegate = delegate;
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
        return delegate == null ? clusterDescription.getServerDescriptions() : delegate.select(clusterDescription);
    }

    @Override
    public String toString() {
        return delegate == null ? "WriteGuard(no server selector)" : "WriteGuard(" + delegate + ")";
    }
}
