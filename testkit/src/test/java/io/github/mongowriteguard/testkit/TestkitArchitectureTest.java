package io.github.mongowriteguard.testkit;

import static com.tngtech.archunit.lang.syntax.ArchRuleDefinition.classes;
import static com.tngtech.archunit.lang.syntax.ArchRuleDefinition.methods;
import static com.tngtech.archunit.library.dependencies.SlicesRuleDefinition.slices;

import com.tngtech.archunit.core.domain.JavaClass;
import com.tngtech.archunit.core.domain.JavaClasses;
import com.tngtech.archunit.core.importer.ClassFileImporter;
import com.tngtech.archunit.core.importer.ImportOption;
import com.tngtech.archunit.library.dependencies.SliceAssignment;
import com.tngtech.archunit.library.dependencies.SliceIdentifier;
import io.github.mongowriteguard.testkit.node.EmulatedNode;
import io.github.mongowriteguard.testkit.node.NodeInternals;
import io.github.mongowriteguard.testkit.replication.ReplicaSetCoordinator;
import org.junit.jupiter.api.Test;

/**
 * The testkit's published surface, checked on every build: what a user's test needs from a node (start, connect,
 * fail points, counters, truth) and nothing of the emulator's inner parts, which are package-private classes named
 * after the server components they stand for (see docs/testkit.md, "What a test uses").
 */
class TestkitArchitectureTest {
    private static final JavaClasses TESTKIT = new ClassFileImporter()
            .withImportOption(ImportOption.Predefined.DO_NOT_INCLUDE_TESTS)
            .importPackages("io.github.mongowriteguard.testkit");

    /**
     * A node's public methods are what a test calls on {@code cluster.primary()}, {@code cluster.shard(i)} or
     * {@code cluster.mongos(i)}; a new one is a decision, taken here.
     */
    @Test
    void emulatedNode_publishesOnlyWhatATestNeeds() {
        methods()
                .that()
                .areDeclaredIn(EmulatedNode.class)
                .and()
                .arePublic()
                .should()
                .haveNameMatching(String.join(
                        "|",
                        // who it is, where to connect
                        "address",
                        "name",
                        "identity",
                        "tags",
                        "toString",
                        // faults: fail points, the emulator's own network faults and stalls
                        "failCommand",
                        "onPrimaryTransactionalWrite",
                        "loseReplies",
                        "stopLosingReplies",
                        "cutOff",
                        "stall",
                        "pauseAfterStatements",
                        "transactionLifetimeLimitSeconds",
                        // counters and truth
                        "truth",
                        "commandCount",
                        "received",
                        "openTransactions",
                        "engine",
                        // lifecycle, and the wire server's callback (CommandHandler)
                        "awaitNoOperations",
                        "close",
                        "handle"))
                .check(TESTKIT);
    }

    /** The cluster layers' hooks into a node stay with the cluster layers. */
    @Test
    void nodeInternals_areUsedOnlyByTheTestkitsClusterLayers() {
        classes()
                .that()
                .areAssignableTo(NodeInternals.class)
                .should()
                .onlyBeAccessed()
                .byClassesThat()
                .resideInAnyPackage(
                        "io.github.mongowriteguard.testkit",
                        "io.github.mongowriteguard.testkit.node",
                        "io.github.mongowriteguard.testkit.replication",
                        "io.github.mongowriteguard.testkit.sharding")
                .check(TESTKIT);
    }

    /**
     * A replica set's coordinator is driven through its facades ({@code EmulatedReplicaSet}, a shard's
     * {@code ShardReplicaSet}); a test uses those, never the coordinator.
     */
    @Test
    void replicaSetCoordinator_isUsedOnlyThroughTheSetFacades() {
        classes()
                .that()
                .areAssignableTo(ReplicaSetCoordinator.class)
                .should()
                .onlyBeAccessed()
                .byClassesThat()
                .resideInAnyPackage(
                        "io.github.mongowriteguard.testkit",
                        "io.github.mongowriteguard.testkit.replication",
                        "io.github.mongowriteguard.testkit.sharding")
                .check(TESTKIT);
    }

    /**
     * The coordinator is one facade: its public methods are what {@code EmulatedReplicaSet} and a shard's
     * {@code ShardReplicaSet} call; the rules (elections, stepdown, write concern, the applier) stay in its
     * package-private parts.
     */
    @Test
    void replicaSetCoordinator_publishesOnlyWhatTheSetFacadesCall() {
        methods()
                .that()
                .areDeclaredIn(ReplicaSetCoordinator.class)
                .and()
                .arePublic()
                .should()
                .haveNameMatching(String.join(
                        "|",
                        // what the set is and what it did
                        "nodes",
                        "primary",
                        "state",
                        "rolledBack",
                        "oplogSize",
                        "toString",
                        // elections and waits
                        "stepDown",
                        "stepUp",
                        "awaitPrimary",
                        "awaitReplication",
                        // faults and lifecycle
                        "stop",
                        "start",
                        "partition",
                        "heal",
                        "pauseReplication",
                        "close"))
                .check(TESTKIT);
    }

    /**
     * The replication package publishes the coordinator and the two enums a test names ({@code MemberState},
     * {@code PartitionMode}); its parts ({@code TopologyCoordinator}, {@code StepDown}, {@code ReplicationWaiter},
     * {@code OplogApplier}, {@code Member}, the oplog) are package-private.
     */
    @Test
    void theReplicationParts_arePackagePrivate() {
        classes()
                .that()
                .resideInAPackage("io.github.mongowriteguard.testkit.replication")
                .and()
                .arePublic()
                .and()
                .areTopLevelClasses()
                .should()
                .haveNameMatching("io\\.github\\.mongowriteguard\\.testkit\\.replication\\.("
                        + String.join("|", "ReplicaSetCoordinator", "MemberState", "PartitionMode")
                        + ")")
                .check(TESTKIT);
    }

    /**
     * The node's parts (dispatch, authentication, fail points, the session catalog and a migration's retry history,
     * admin commands, {@code hello}) are package-private: the public types of {@code node} are the node, who it says it is, its replica-set role,
     * the cluster layers' hooks and the types those hooks take.
     */
    @Test
    void theNodesParts_arePackagePrivate() {
        classes()
                .that()
                .resideInAPackage("io.github.mongowriteguard.testkit.node")
                .and()
                .arePublic()
                .and()
                .areTopLevelClasses()
                .should()
                .haveNameMatching("io\\.github\\.mongowriteguard\\.testkit\\.node\\.("
                        + String.join(
                                "|",
                                "EmulatedNode",
                                "NodeIdentity",
                                "Membership",
                                "NodeInternals",
                                "CommandExecutor",
                                "OperationContext",
                                "OperationInterruptedException",
                                "SessionMatch",
                                "ShardOperations")
                        + ")")
                .check(TESTKIT);
    }

    /**
     * The testkit's packages import each other in one direction only; each package is its own slice, the root's
     * facades ({@code EmulatedCluster} and the rest) included, so the cluster layers below them never reach back up.
     */
    @Test
    void everyPackage_isFreeOfCycles() {
        slices().assignedFrom(new SliceAssignment() {
                    @Override
                    public SliceIdentifier getIdentifierOf(JavaClass javaClass) {
                        return javaClass.getPackageName().startsWith("io.github.mongowriteguard.testkit")
                                ? SliceIdentifier.of(javaClass.getPackageName())
                                : SliceIdentifier.ignore();
                    }

                    @Override
                    public String getDescription() {
                        return "each package of io.github.mongowriteguard.testkit, the root included";
                    }
                })
                .should()
                .beFreeOfCycles()
                .check(TESTKIT);
    }
}
