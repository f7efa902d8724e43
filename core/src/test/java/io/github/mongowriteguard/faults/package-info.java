/**
 * A seeded, bounded Jepsen-style fault suite (issue 14): clients run a workload of inserts without {@code _id},
 * upserting replacements, {@code $inc}/{@code $push} updates, small bulks and {@code updateMany}/{@code deleteMany}
 * through one {@link io.github.mongowriteguard.faults.Writer} (the guard, or the raw driver with a 3-attempt
 * application loop) while a {@link io.github.mongowriteguard.faults.Nemesis} injects faults into an emulated
 * {@link io.github.mongowriteguard.faults.Deployment}; a {@link io.github.mongowriteguard.faults.Ledger} keeps what each
 * write claimed, and {@link io.github.mongowriteguard.faults.Checks} compare it, after quiescence, with the documents and
 * the servers' copies: nothing acknowledged lost, nothing applied twice, one copy at a time, every outcome honest.
 *
 * <p>Entry points: {@link io.github.mongowriteguard.faults.FaultRun#run} (one deployment, one writer) and
 * {@link io.github.mongowriteguard.faults.FaultTable#of} (issue 14's table). JUnit: {@code FaultSuiteTest}; the
 * classes are in core's test jar for a lab scenario.
 */
package io.github.mongowriteguard.faults;
