package io.github.mongowriteguard.testkit.node;

import io.github.mongowriteguard.testkit.engine.StorageEngine;
import io.github.mongowriteguard.testkit.failpoint.FailCommand;
import io.github.mongowriteguard.testkit.failpoint.OnPrimaryTransactionalWrite;
import org.bson.BsonDocument;

/**
 * The {@code configureFailPoint} command, as mongodb/mongo {@code src/mongo/db/commands/fail_point_cmd.cpp} runs it:
 * on {@code admin} only, naming one fail point, whose mode and data it replaces ({@code src/mongo/util/fail_point.cpp}
 * {@code FailPoint::setMode}). The node's fail points are {@code failCommand} and {@code onPrimaryTransactionalWrite};
 * a member of a replicating set adds its own ({@code stopReplProducer}).
 */
final class FailPointCommand {
    private final EmulatedNode node;
    private final FailCommand failCommand;
    private final OnPrimaryTransactionalWrite onPrimaryTransactionalWrite;

    FailPointCommand(
            EmulatedNode node, FailCommand failCommand, OnPrimaryTransactionalWrite onPrimaryTransactionalWrite) {
        this.node = node;
        this.failCommand = failCommand;
        this.onPrimaryTransactionalWrite = onPrimaryTransactionalWrite;
    }

    BsonDocument configureFailPoint(String database, BsonDocument command) {
        if (!database.equals("admin")) {
            return StorageEngine.error(
                    13, "Unauthorized", "configureFailPoint may only be run against the admin database.");
        }
        String failPoint = command.get("configureFailPoint").asString().getValue();
        Membership member = node.membership();
        BsonDocument replicationFailPoint = member == null ? null : member.configureFailPoint(failPoint, command);
        if (replicationFailPoint != null) {
            return replicationFailPoint;
        }
        if (!failPoint.equals("failCommand") && !failPoint.equals("onPrimaryTransactionalWrite")) {
            return StorageEngine.error(
                    2,
                    "BadValue",
                    "Cannot find failpoint: " + failPoint
                            + " (the testkit emulates failCommand, onPrimaryTransactionalWrite and, on members of a replicating set,"
                            + " stopReplProducer)");
        }
        try {
            if (failPoint.equals("failCommand")) {
                failCommand.configure(command);
            } else {
                onPrimaryTransactionalWrite.configure(command);
            }
        } catch (IllegalArgumentException e) {
            return StorageEngine.error(2, "BadValue", e.getMessage());
        }
        return EmulatedNode.ok();
    }
}
