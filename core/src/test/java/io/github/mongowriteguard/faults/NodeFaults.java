package io.github.mongowriteguard.faults;

import io.github.mongowriteguard.testkit.node.EmulatedNode;
import io.github.mongowriteguard.testkit.node.NodeIdentity;
import io.github.mongowriteguard.testkit.stall.Stall;
import io.github.mongowriteguard.testkit.stall.StallHandle;
import io.github.mongowriteguard.testkit.truth.ReceivedCommand;
import java.time.Duration;
import java.util.Random;
import java.util.Set;
import org.bson.BsonArray;
import org.bson.BsonBoolean;
import org.bson.BsonDocument;
import org.bson.BsonInt32;
import org.bson.BsonString;
import org.bson.BsonValue;

/**
 * The faults one node can suffer: its fail points ({@code failCommand}, {@code onPrimaryTransactionalWrite}), stalls
 * and lost replies, configured as a test configures them on mongod ({@code configureFailPoint}; one configuration per
 * fail point at a time).
 */
final class NodeFaults {
    static final Set<String> WRITES = Set.of("insert", "update", "delete");
    private static final String NAMESPACE = Workload.DATABASE + "." + Workload.COLLECTION;
    private static final int[] RETRYABLE_CODES = {91, 189, 10107, 11600, 11602};
    private static final int[] NON_RETRYABLE_CODES = {2, 8, 96};

    private NodeFaults() {}

    static boolean isWrite(ReceivedCommand command) {
        return WRITES.contains(command.commandName());
    }

    /**
     * Injects {@code fault}.
     *
     * @param writes the node whose write commands fail (a primary, a shard primary or a mongos)
     * @param stalls the node whose writes stall (a primary or a shard primary)
     * @param gate   the node the overlap gate asks ({@code currentOp}): the primary, or a mongos
     * @return what heals it
     */
    static Runnable inject(
            Fault fault,
            Random random,
            EmulatedNode writes,
            EmulatedNode stalls,
            EmulatedNode gate,
            FaultConfig config) {
        long socketMs = config.socketTimeout().toMillis();
        switch (fault) {
            case RETRYABLE_ERROR:
                return failCommand(
                        writes,
                        times(1 + random.nextInt(5)),
                        writeCommands()
                                .append(
                                        "errorCode",
                                        new BsonInt32(RETRYABLE_CODES[random.nextInt(RETRYABLE_CODES.length)])));
            case NON_RETRYABLE_ERROR:
                return failCommand(
                        writes,
                        times(1 + random.nextInt(3)),
                        writeCommands()
                                .append(
                                        "errorCode",
                                        new BsonInt32(
                                                NON_RETRYABLE_CODES[random.nextInt(NON_RETRYABLE_CODES.length)])));
            case CLOSED_CONNECTION:
                return failCommand(
                        writes,
                        times(1 + random.nextInt(4)),
                        writeCommands().append("closeConnection", BsonBoolean.TRUE));
            case WRITE_CONCERN_ERROR: {
                BsonDocument error = random.nextBoolean()
                        ? new BsonDocument("code", new BsonInt32(64))
                                .append("codeName", new BsonString("WriteConcernFailed"))
                                .append("errmsg", new BsonString("waiting for replication timed out"))
                                .append("errInfo", new BsonDocument("wtimeout", BsonBoolean.TRUE))
                        : new BsonDocument("code", new BsonInt32(91))
                                .append("codeName", new BsonString("ShutdownInProgress"))
                                .append("errmsg", new BsonString("Replication is being shut down"));
                return failCommand(
                        writes, times(1 + random.nextInt(5)), writeCommands().append("writeConcernError", error));
            }
            case BLOCK_PAST_SOCKET_TIMEOUT:
                return failCommand(
                        writes,
                        times(1 + random.nextInt(3)),
                        writeCommands()
                                .append("blockConnection", BsonBoolean.TRUE)
                                .append("blockTimeMS", new BsonInt32((int) socketMs + 200 + random.nextInt(400))));
            case INTERRUPTIBLE_STALL:
                return stall(
                        stalls,
                        Stall.interruptible(NAMESPACE, Duration.ofMillis(socketMs + 300 + random.nextInt(700))));
            case UNINTERRUPTIBLE_STALL:
                return stall(
                        stalls,
                        Stall.uninterruptible(NAMESPACE, Duration.ofMillis(socketMs + 300 + random.nextInt(700))));
            case APPLIED_THEN_CLOSED: {
                boolean mongos = writes.identity().kind() == NodeIdentity.Kind.MONGOS;
                if (mongos || random.nextBoolean()) {
                    writes.loseReplies(1 + random.nextInt(4), WRITES.toArray(String[]::new));
                    return writes::stopLosingReplies;
                }
                writes.onPrimaryTransactionalWrite()
                        .configure(new BsonDocument("configureFailPoint", new BsonString("onPrimaryTransactionalWrite"))
                                .append("mode", times(1 + random.nextInt(3)))
                                .append("data", new BsonDocument("closeConnection", BsonBoolean.TRUE)));
                return () -> writes.onPrimaryTransactionalWrite().off();
            }
            case CURRENT_OP_REFUSED: {
                Runnable refuse = failCommand(
                        gate, new BsonString("alwaysOn"), commands("currentOp").append("errorCode", new BsonInt32(13)));
                Runnable stall = stall(stalls, Stall.uninterruptible(NAMESPACE, Duration.ofMillis(socketMs + 500)));
                return () -> {
                    stall.run();
                    refuse.run();
                };
            }
            case GATE_CURRENT_OP_FAILS: {
                BsonDocument data = random.nextBoolean()
                        ? commands("currentOp").append("closeConnection", BsonBoolean.TRUE)
                        : commands("currentOp")
                                .append("blockConnection", BsonBoolean.TRUE)
                                .append("blockTimeMS", new BsonInt32((int) socketMs + 300));
                Runnable fail = failCommand(gate, new BsonString("alwaysOn"), data);
                Runnable stall = stall(stalls, Stall.uninterruptible(NAMESPACE, Duration.ofMillis(socketMs + 500)));
                return () -> {
                    stall.run();
                    fail.run();
                };
            }
            default:
                throw new IllegalArgumentException(fault + " is not a node fault");
        }
    }

    /** Turns off every fail point and lost reply of {@code node}. */
    static void clear(EmulatedNode node) {
        node.failCommand().off();
        node.onPrimaryTransactionalWrite().off();
        node.stopLosingReplies();
    }

    private static BsonDocument writeCommands() {
        return commands(WRITES.toArray(String[]::new));
    }

    private static BsonDocument commands(String... names) {
        BsonArray list = new BsonArray();
        for (String name : names) {
            list.add(new BsonString(name));
        }
        return new BsonDocument("failCommands", list);
    }

    private static BsonValue times(int n) {
        return new BsonDocument("times", new BsonInt32(n));
    }

    private static Runnable failCommand(EmulatedNode node, BsonValue mode, BsonDocument data) {
        node.failCommand()
                .configure(new BsonDocument("configureFailPoint", new BsonString("failCommand"))
                        .append("mode", mode)
                        .append("data", data));
        return () -> node.failCommand().off();
    }

    private static Runnable stall(EmulatedNode node, Stall stall) {
        StallHandle handle = node.stall(stall);
        return handle::release;
    }
}
