package io.github.mongowriteguard.testkit.node;

import io.github.mongowriteguard.testkit.server.ServerVersion;

/**
 * When mongod starts a command's {@code maxTimeMS} clock relative to the {@code failCommand} fail point, per version:
 * 4.4 and 5.0 set the deadline after the fail point ({@code opCtx->setDeadlineAfterNowBy} follows
 * {@code evaluateFailCommandFailPoint} in mongodb/mongo {@code src/mongo/db/service_entry_point_common.cpp}
 * {@code execCommandDatabase}), so a {@code blockConnection} does not count; from 6.0 the command's start time is
 * taken before the fail point is evaluated and the deadline is that start plus {@code maxTimeMS}
 * ({@code service_entry_point_common.cpp} 6.0, {@code service_entry_point_shard_role.cpp} later), so the block counts
 * and a block longer than {@code maxTimeMS} leaves the command expired when it ends.
 */
final class CommandDeadline {
    private final long startNanos;
    private final boolean countsTheFailPoint;

    private CommandDeadline(long startNanos, boolean countsTheFailPoint) {
        this.startNanos = startNanos;
        this.countsTheFailPoint = countsTheFailPoint;
    }

    /** Taken when mongod takes the command's start time: before the fail point. */
    static CommandDeadline before(NodeIdentity identity) {
        return new CommandDeadline(
                System.nanoTime(),
                identity.kind() != NodeIdentity.Kind.MONGOS
                        && identity.version().atLeast(ServerVersion.V6_0));
    }

    /** After the fail point: arms the operation's deadline from the start the version counts from. */
    void arm(OperationContext operation) {
        if (countsTheFailPoint) {
            operation.startDeadlineFrom(startNanos);
        } else {
            operation.startDeadlineNow();
        }
    }
}
