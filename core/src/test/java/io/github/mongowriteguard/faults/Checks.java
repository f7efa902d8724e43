package io.github.mongowriteguard.faults;

import io.github.mongowriteguard.testkit.truth.ReceivedCommand;
import io.github.mongowriteguard.testkit.truth.ServerTruth;
import java.util.ArrayList;
import java.util.Collections;
import java.util.Comparator;
import java.util.EnumMap;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.bson.Document;

/**
 * The checks after quiescence, from the ledger, the final documents and the servers' record of copies:
 * <ul>
 *   <li><b>lost</b>: an APPLIED write whose effect is missing (an insert's document, a tag in a counter's or group's
 *       log, the last acknowledged replacement of a key, a deleted scratch set), also when it came with a
 *       write-concern error (counted apart as well: the write was not confirmed durable, but the outcome said
 *       APPLIED);</li>
 *   <li><b>applied twice</b>: a tag found twice (two documents of one insert, two entries of one {@code $push});</li>
 *   <li><b>max copies at once</b>: the most server copies (distinct {@code (lsid, txnNumber)}, or commands without one)
 *       of one logical write (one guarded call, one raw operation) running at the same moment (testkit
 *       {@code ServerTruth});</li>
 *   <li><b>dishonest</b>: an outcome that says not applied (FAILED without "may have changed documents", SKIPPED, not
 *       sent; the raw driver's final exception) although the write was applied, or that says retry-safe although a
 *       resend would apply it twice (an applied {@code $inc}/{@code $push} or {@code updateMany}).</li>
 * </ul>
 * UNKNOWN allows "applied" and "not applied", never "twice". A PARTIAL multi-document write allows any subset.
 */
final class Checks {
    private Checks() {}

    /** The final documents, indexed by what the writes left in them. */
    private static final class State {
        final Map<String, Integer> insertsByTag = new HashMap<>();
        final Map<String, String> replacedTag = new HashMap<>();
        final Map<String, List<Object>> counterLog = new HashMap<>();
        final Map<Integer, List<List<Object>>> groupLogs = new HashMap<>();
        final Map<String, Integer> scratchLeft = new HashMap<>();

        State(List<Document> documents) {
            for (Document document : documents) {
                String t = document.getString("t");
                Object id = document.get("_id");
                if ("ins".equals(t)) {
                    insertsByTag.merge(document.getString("tag"), 1, Integer::sum);
                } else if ("ent".equals(t)) {
                    replacedTag.put((String) id, document.getString("tag"));
                } else if (document.containsKey("log")) {
                    counterLog.put((String) id, document.getList("log", Object.class));
                } else if (document.containsKey("g")) {
                    groupLogs
                            .computeIfAbsent(document.getInteger("g"), g -> new ArrayList<>())
                            .add(document.getList("mlog", Object.class));
                } else if (document.containsKey("s")) {
                    scratchLeft.merge(document.getString("s"), 1, Integer::sum);
                }
            }
        }
    }

    static FaultReport check(
            FaultConfig config,
            Writer.Kind writer,
            Workload workload,
            Ledger ledger,
            List<Document> documents,
            List<ReceivedCommand> commands,
            Map<Fault, Integer> faults,
            String deploymentSummary,
            java.time.Duration elapsed) {
        State state = new State(documents);
        List<String> violations = new ArrayList<>();
        List<String> notes = new ArrayList<>();
        if (!deploymentSummary.isEmpty()) {
            notes.add(deploymentSummary);
        }
        int lost = 0;
        int twice = 0;
        int dishonest = 0;
        int lostAfterWce = 0;
        int threw = 0;
        Map<Claim, Integer> claims = new EnumMap<>(Claim.class);
        Map<String, List<Ledger.Entry>> replacements = new LinkedHashMap<>();
        for (Ledger.Entry entry : ledger.entries()) {
            claims.merge(entry.claim(), 1, Integer::sum);
            if (entry.detail().startsWith("execute threw")) {
                threw++;
                violations.add("threw: " + entry.write() + ": " + entry.detail());
            }
            Write write = entry.write();
            if (write.kind() == WriteKind.REPLACE) {
                replacements
                        .computeIfAbsent(write.target(), k -> new ArrayList<>())
                        .add(entry);
                continue;
            }
            Effect effect = effect(write, state);
            if (effect.times() > 1) {
                twice++;
                violations.add("applied twice: " + describe(entry, effect));
            }
            if (entry.claim() == Claim.APPLIED && !effect.complete()) {
                lost++;
                if (entry.writeConcernError()) {
                    lostAfterWce++;
                    violations.add(
                            "lost after a write-concern error (APPLIED, then rolled back): " + describe(entry, effect));
                } else {
                    violations.add("lost: " + describe(entry, effect));
                }
            }
            if (entry.claim() == Claim.NOT_APPLIED && effect.times() > 0) {
                dishonest++;
                violations.add("said not applied, was applied: " + describe(entry, effect));
            } else if (entry.claim() != Claim.APPLIED
                    && entry.retrySafe()
                    && !write.kind().idempotent()
                    && effect.times() > 0) {
                dishonest++;
                violations.add("said retry-safe, a resend would apply it twice: " + describe(entry, effect));
            }
        }
        int lateOverwrites = 0;
        for (Map.Entry<String, List<Ledger.Entry>> key : replacements.entrySet()) {
            List<Ledger.Entry> history = key.getValue();
            history.sort(Comparator.comparingInt(Ledger.Entry::order)
                    .thenComparingInt(e -> e.operation().writes().indexOf(e.write())));
            String finalTag = state.replacedTag.get(key.getKey());
            Ledger.Entry stored = history.stream()
                    .filter(e -> e.write().tag().equals(finalTag))
                    .findFirst()
                    .orElse(null);
            Ledger.Entry lastApplied = null;
            for (Ledger.Entry entry : history) {
                if (entry.claim() == Claim.APPLIED) {
                    lastApplied = entry;
                }
            }
            if (stored != null && stored.claim() == Claim.NOT_APPLIED) {
                dishonest++;
                violations.add("said not applied, was applied (its replacement is stored): " + stored.write() + " "
                        + stored.detail());
                continue;
            }
            if (lastApplied == null || stored == lastApplied) {
                continue;
            }
            boolean laterUnknown = stored != null
                    && stored.claim() == Claim.UNKNOWN
                    && history.indexOf(stored) > history.indexOf(lastApplied);
            if (laterUnknown) {
                continue;
            }
            if (stored != null && stored.claim() == Claim.UNKNOWN) {
                lateOverwrites++;
                notes.add("acknowledged " + lastApplied.write() + " overwritten by a late copy of the earlier UNKNOWN "
                        + stored.write());
                continue;
            }
            lost++;
            if (lastApplied.writeConcernError()) {
                lostAfterWce++;
            }
            violations.add((lastApplied.writeConcernError() ? "lost after a write-concern error: " : "lost: ")
                    + lastApplied.write() + " " + lastApplied.detail() + "; stored: "
                    + (stored == null
                            ? (finalTag == null ? "nothing" : finalTag)
                            : stored.write() + " " + stored.claim()));
        }
        CopyCount copies = maxCopies(writer, commands);
        if (copies.max() > 1) {
            StringBuilder shown = new StringBuilder();
            commands.stream()
                    .filter(c -> copies.group().equals(writer.copyGroup(c)))
                    .forEach(c -> shown.append("\n      ")
                            .append(c.txnId())
                            .append(' ')
                            .append(c.node())
                            .append(" conn")
                            .append(c.connectionId())
                            .append(" +")
                            .append((c.startNanos() - commands.get(0).startNanos()) / 1_000_000)
                            .append(" ms for ")
                            .append(c.running() ? "(running)" : ((c.endNanos() - c.startNanos()) / 1_000_000) + " ms")
                            .append(' ')
                            .append(c.outcome())
                            .append(c.errorCode() == 0 ? "" : " " + c.errorCode())
                            .append(c.executed() ? " executed, applied " + c.applied() : ""));
            violations.add(copies.max() + " copies at once of " + copies.group() + ":" + shown);
        }
        return new FaultReport(
                config.topology(),
                config.deployment(),
                writer,
                config.seed(),
                workload.operationCount(),
                workload.writeCount(),
                lost,
                twice,
                copies.max(),
                dishonest,
                lostAfterWce,
                lateOverwrites,
                threw,
                claims,
                faults,
                Collections.unmodifiableList(violations),
                Collections.unmodifiableList(notes),
                elapsed);
    }

    /**
     * What the final documents show of a write: how many times its tag is there (per document of an {@code updateMany}
     * group, the most), and whether its whole effect is there.
     */
    private record Effect(int times, boolean complete, String shown) {}

    private static Effect effect(Write write, State state) {
        switch (write.kind()) {
            case INSERT: {
                int count = state.insertsByTag.getOrDefault(write.tag(), 0);
                return new Effect(count, count >= 1, count + " document(s)");
            }
            case INC: {
                int count =
                        Collections.frequency(state.counterLog.getOrDefault(write.target(), List.of()), write.tag());
                return new Effect(count, count >= 1, count + " time(s) in " + write.target());
            }
            case UPDATE_MANY: {
                List<Integer> counts = new ArrayList<>();
                for (List<Object> log : state.groupLogs.getOrDefault(Integer.parseInt(write.target()), List.of())) {
                    counts.add(Collections.frequency(log, write.tag()));
                }
                int max = counts.stream().mapToInt(Integer::intValue).max().orElse(0);
                boolean all = !counts.isEmpty() && counts.stream().allMatch(c -> c >= 1);
                return new Effect(max, all, "per document of group " + write.target() + ": " + counts);
            }
            case DELETE_MANY: {
                int left = state.scratchLeft.getOrDefault(write.target(), 0);
                int deleted = Workload.SCRATCH_SIZE - left;
                return new Effect(
                        deleted > 0 ? 1 : 0, left == 0, deleted + " of " + Workload.SCRATCH_SIZE + " deleted");
            }
            default:
                throw new IllegalStateException(write.kind().toString());
        }
    }

    private static String describe(Ledger.Entry entry, Effect effect) {
        return entry.write() + " (call " + entry.operation().id() + ", " + entry.claim() + ": " + entry.detail()
                + ") shows " + effect.shown();
    }

    private record CopyCount(int max, String group) {}

    /** The most copies of one logical write running at once, over every group of commands. */
    private static CopyCount maxCopies(Writer.Kind writer, List<ReceivedCommand> commands) {
        ServerTruth.CopiesAtOnce most = ServerTruth.maxConcurrentCopiesPerKey(commands, command -> {
            String group = writer.copyGroup(command);
            return group == null ? List.<String>of() : List.of(group);
        });
        return new CopyCount(most.max(), most.key());
    }
}
