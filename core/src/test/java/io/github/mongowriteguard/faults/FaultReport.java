package io.github.mongowriteguard.faults;

import java.time.Duration;
import java.util.List;
import java.util.Map;

/**
 * What one fault run found, in the columns of issue 14's table, with every violation spelled out (write, claim, what
 * the documents show) so that a run can be replayed from its seed.
 *
 * @param deployment           what the run wrote to ({@link FaultConfig#deployment()})
 * @param lost                 APPLIED but absent from the final documents
 * @param appliedTwice         writes whose effect is in the final documents more than once
 * @param maxCopiesAtOnce      the most server copies of one logical write that ran at the same moment
 * @param dishonest            outcome said not applied (or retry-safe) but the write was applied
 * @param lostAfterWriteConcernError of {@code lost}, those APPLIED with a write-concern error (not confirmed durable)
 * @param lateOverwrites       an acknowledged replacement overwritten by a late copy of an earlier UNKNOWN one
 * @param threw                calls that threw instead of returning an outcome
 * @param notes                what the counts apart from the table's columns refer to (writes lost after a write-concern
 *                             error, late overwrites)
 */
public record FaultReport(
        Topology topology,
        String deployment,
        Writer.Kind writer,
        long seed,
        int operations,
        int writes,
        int lost,
        int appliedTwice,
        int maxCopiesAtOnce,
        int dishonest,
        int lostAfterWriteConcernError,
        int lateOverwrites,
        int threw,
        Map<Claim, Integer> claims,
        Map<Fault, Integer> faults,
        List<String> violations,
        List<String> notes,
        Duration elapsed) {

    /** The guard's promise: nothing lost, nothing applied twice, one copy at a time, every outcome honest. */
    public boolean clean() {
        return lost == 0 && appliedTwice == 0 && maxCopiesAtOnce <= 1 && dishonest == 0 && threw == 0;
    }

    /** One row of the table: {@code | writer | lost | applied twice | max copies at once | dishonest |}. */
    public String row() {
        return "| " + writer.label() + " | " + lost + " | " + appliedTwice + " | " + maxCopiesAtOnce + " | " + dishonest
                + " |";
    }

    /** The whole report: the row, the counts behind it, the faults injected and the first violations. */
    public String describe(int maxViolations) {
        StringBuilder text = new StringBuilder();
        text.append(deployment)
                .append(", ")
                .append(writer.label())
                .append(", seed ")
                .append(seed)
                .append(": ")
                .append(operations)
                .append(" operations, ")
                .append(writes)
                .append(" writes in ")
                .append(elapsed.toMillis() / 1000.0)
                .append(" s\n")
                .append("  claims ")
                .append(claims)
                .append('\n')
                .append("  faults ")
                .append(faults)
                .append('\n')
                .append("  lost ")
                .append(lost)
                .append(", applied twice ")
                .append(appliedTwice)
                .append(", max copies at once ")
                .append(maxCopiesAtOnce)
                .append(", dishonest ")
                .append(dishonest)
                .append(", threw ")
                .append(threw)
                .append(" (lost after a write-concern error ")
                .append(lostAfterWriteConcernError)
                .append(')')
                .append("; acknowledged then overwritten by a late UNKNOWN copy ")
                .append(lateOverwrites)
                .append('\n');
        violations.stream()
                .limit(maxViolations)
                .forEach(v -> text.append("  - ").append(v).append('\n'));
        notes.stream()
                .limit(maxViolations)
                .forEach(n -> text.append("  note: ").append(n).append('\n'));
        if (violations.size() > maxViolations) {
            text.append("  ... ").append(violations.size() - maxViolations).append(" more\n");
        }
        return text.toString();
    }
}
