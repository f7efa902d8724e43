package io.github.mongowriteguard.internal.plan;

import io.github.mongowriteguard.bulk.PlanMode;
import io.github.mongowriteguard.bulk.WriteDecision;
import java.util.AbstractList;
import java.util.List;
import java.util.RandomAccess;
import org.jspecify.annotations.Nullable;

/**
 * What a {@link PlannedBulk} does with each write, and why: its {@link WriteDecision}s, each built when read (a plan of
 * 100,000 writes builds none unless asked), with a reason for logs and exception messages that names indices, kinds
 * and {@code _id}s ({@link Ids#format}), never other document values.
 */
final class WriteDecisions {

    private final PlanMode mode;
    private final WriteFacts[] facts;
    private final int[] roundOf;
    private final int[] previousOnKey;
    private final int firstUnkeyed;
    /** Per write: the first write of its run (writes of one key travelling in one command), or null when none. */
    private final int @Nullable [] runStart;
    /** Per write: the later write that supersedes it under last-write-wins, or -1; null when none is superseded. */
    private final int @Nullable [] supersededBy;

    WriteDecisions(
            PlanMode mode,
            WriteFacts[] facts,
            int[] roundOf,
            int[] previousOnKey,
            int firstUnkeyed,
            int @Nullable [] runStart,
            int @Nullable [] supersededBy) {
        this.mode = mode;
        this.facts = facts;
        this.roundOf = roundOf;
        this.previousOnKey = previousOnKey;
        this.firstUnkeyed = firstUnkeyed;
        this.runStart = runStart;
        this.supersededBy = supersededBy;
    }

    /** The decision on write {@code index}, a valid index of the plan. */
    WriteDecision decision(int index) {
        WriteFacts write = facts[index];
        return new PlannedDecision(
                index,
                write.kind,
                write.isKeyed(),
                write.id,
                write.plannedFilter(),
                roundOf[index],
                previousOnKey[index],
                reasonFor(index));
    }

    /** Every decision, in index order: an unmodifiable list view whose elements are built when read. */
    List<WriteDecision> all() {
        return new DecisionList();
    }

    private String reasonFor(int index) {
        WriteFacts write = facts[index];
        return switch (mode) {
            case STRICT_ORDERED -> "round 1 (ORDERED, as given): strictOrdered is set";
            case PRESERVE_ORDER ->
                write.isKeyed()
                        ? "round 1 (ORDERED, in the caller's order): the ordered bulk has unkeyed writes, first at index "
                                + firstUnkeyed
                        : "round 1 (ORDERED, in the caller's order): unkeyed, " + write.kind.modelName() + " "
                                + write.unkeyedExplanation();
            case UNORDERED_ROUNDS -> reasonInRounds(index, write);
        };
    }

    private String reasonInRounds(int index, WriteFacts write) {
        if (supersededBy != null && supersededBy[index] >= 0) {
            int by = supersededBy[index];
            return "not sent (lastWriteWins): #" + by + ", a later " + facts[by].kind.modelName() + " of _id "
                    + Ids.format(write.id) + " on that _id alone, decides the document";
        }
        if (!write.isKeyed()) {
            return "round 1: unkeyed, " + write.kind.modelName() + " " + write.unkeyedExplanation()
                    + "; the bulk is unordered, so it joins the first round";
        }
        if (write.id == null) {
            return "round 1: insert without _id; it gets a fresh one when sent, so no other write in this bulk"
                    + " can touch its document";
        }
        StringBuilder text = new StringBuilder("round ").append(roundOf[index]).append(": ");
        int previous = previousOnKey[index];
        if (previous >= 0 && runStart != null && runStart[index] != index) {
            text.append("after #")
                    .append(previous)
                    .append(" on the same _id ")
                    .append(Ids.format(write.id))
                    .append(", in the same command (the server runs a command's statements in order)");
        } else if (previous < 0) {
            text.append("first write on _id ").append(Ids.format(write.id));
        } else {
            text.append("after #").append(previous).append(" on the same _id ").append(Ids.format(write.id));
        }
        if (write.otherConditions) {
            text.append(" (its filter has other conditions too)");
        }
        if (write.singleDocument) {
            text.append("; ")
                    .append(write.kind.modelName())
                    .append(" sent as a single-document statement: its filter pins _id, which matches at most one"
                            + " document");
        }
        return text.toString();
    }

    private final class DecisionList extends AbstractList<WriteDecision> implements RandomAccess {
        @Override
        public WriteDecision get(int index) {
            return decision(index);
        }

        @Override
        public int size() {
            return facts.length;
        }
    }
}
