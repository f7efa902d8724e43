#!/usr/bin/env bash
# The compatibility matrix: a compatibility subset of the tests, once per supported combination of Spring Boot and
# the MongoDB Java driver, each combination selected by the root pom's profiles (driver-*, boot-4.1) and bounded in
# time. Prints a Markdown table (also written to target/compat-matrix.md) and exits non-zero if a combination failed.
#
#   .ci/compat-matrix.sh                 # every combination, about 12 minutes on 2 cores
#   .ci/compat-matrix.sh boot-4.1        # only the combinations whose profiles contain "boot-4.1"
#   MVN_ARGS=-o .ci/compat-matrix.sh     # offline, once every version has been downloaded
#   COMBO_TIMEOUT=600 .ci/compat-matrix.sh
#
# The subset: what depends on the driver's and Spring's behaviour and types. core: the driver's model and option
# getters (WriteRecordTest), side-by-side parity and wire equivalence with the driver (DriverParityTest,
# WireEquivalenceTest), the guarded collection, server deadlines, part 2's retries, the sharded path; testkit: the
# driver's handshake and retryable writes against the emulator; spring-adapter: the auto-configuration, the guarded
# BulkOperations next to Spring Data's, the Actuator health indicator and info contributor, the Kafka error handler
# and the Kafka end-to-end test.
set -uo pipefail
cd "$(dirname "$0")/.."

CORE_TESTS='WriteRecordTest,DriverParityTest,WireEquivalenceTest,GuardedCollectionTest,GuardedCollectionSurfaceTest,ClientModelsDriverContractTest,ClientBulkWriteTest,GuardedTransactionTest,WriteGuardClientsTest,ServerDeadlineTest,SeedPart2GuardedTest,ShardedGuardTest,RetryableWriteTableTest,IdentityTest'
SPRING_TESTS='GuardedMongoTemplateTest,GuardedMongoTemplateSessionTest,WriteGuardAutoConfigurationTest,WriteGuardActuatorAutoConfigurationTest,GuardedBulkOperationsTest,GuardedErrorHandlersTest,StoreInventoryKafkaEndToEndTest'
TIMEOUT="${COMBO_TIMEOUT:-900}"
FILTER="${1:-}"

# profiles | Spring Boot (Spring Data MongoDB, Spring Kafka) | driver | modules
COMBOS=(
  "driver-5.6.1|4.0.7 (5.0.6, 4.0.6)|5.6.1|testkit,core,spring-adapter"
  "|4.0.7 (5.0.6, 4.0.6)|5.6.5 (default)|testkit,core,spring-adapter"
  "driver-5.8.1|4.0.7 (5.0.6, 4.0.6)|5.8.1|testkit,core,spring-adapter"
  "driver-5.11.1|4.0.7 (5.0.6, 4.0.6)|5.11.1|testkit,core,spring-adapter"
  "driver-5.14.0|4.0.7 (5.0.6, 4.0.6)|5.14.0|testkit,core,spring-adapter"
  "boot-4.1,driver-5.8.1|4.1.2 (5.1.2, 4.1.2)|5.8.1|testkit,core,spring-adapter"
  "boot-4.1,driver-5.14.0|4.1.2 (5.1.2, 4.1.2)|5.14.0|testkit,core,spring-adapter"
  "driver-5.5.2|- (core only; Boot 3.5.7's driver)|5.5.2|testkit,core"
)

mkdir -p target/compat-logs
table=$'| Spring Boot (Spring Data MongoDB, Spring Kafka) | MongoDB driver | profiles | modules | result | tests | time |\n| --- | --- | --- | --- | --- | ---: | ---: |'
failed=0
for combo in "${COMBOS[@]}"; do
  IFS='|' read -r profiles boot driver modules <<<"$combo"
  if [[ -n "$FILTER" && "$profiles" != *"$FILTER"* ]]; then
    continue
  fi
  tests="$CORE_TESTS"
  [[ "$modules" == *spring-adapter* ]] && tests="$tests,$SPRING_TESTS"
  name="${profiles:-default}"
  log="target/compat-logs/${name//,/+}.log"
  echo "== $name: Spring Boot $boot, driver $driver, modules $modules (log: $log)" >&2
  start=$SECONDS
  # clean: classes compiled against another driver or Spring version must not be reused. A failing test does not
  # stop the build (every module's subset runs); the counts below decide.
  timeout "$TIMEOUT" mvn -B ${MVN_ARGS:-} ${profiles:+-P"$profiles"} -pl "$modules" clean test \
    -Dtest="$tests" -Dsurefire.failIfNoSpecifiedTests=false -Dmaven.test.failure.ignore=true >"$log" 2>&1
  code=$?
  seconds=$((SECONDS - start))
  # Surefire's module totals: "Tests run: N, Failures: F, Errors: E, Skipped: S" (the lines without " -- in ").
  read -r run bad skipped < <(grep -E '^\[[A-Z]+\] Tests run: [0-9]+, Failures: [0-9]+, Errors: [0-9]+, Skipped: [0-9]+$' "$log" \
    | sed -E 's/.*Tests run: ([0-9]+), Failures: ([0-9]+), Errors: ([0-9]+), Skipped: ([0-9]+)/\1 \2 \3 \4/' \
    | awk '{r += $1; b += $2 + $3; s += $4} END {print r + 0, b + 0, s + 0}')
  # The failing tests, as Class.method (Surefire: "Class.method -- Time elapsed: ... <<< FAILURE!").
  failures=$(grep -E '<<< (FAILURE|ERROR)!$' "$log" | grep -v 'Tests run:' \
    | sed -E 's/^\[ERROR\] ([^ ]+) -- Time.*/\1/; s/.*\.([A-Za-z0-9_]+\.[A-Za-z0-9_]+)$/\1/' | sort -u | paste -sd ' ' -)
  if [[ $code -eq 124 ]]; then
    result="**timed out** after ${TIMEOUT} s"
    failed=1
  elif [[ $code -ne 0 ]]; then
    result="**build failed** (\`$log\`)"
    failed=1
  elif [[ $bad -gt 0 ]]; then
    result="**failed**: ${failures:-see \`$log\`}"
    failed=1
  else
    result="passed"
  fi
  table+=$'\n'"| $boot | $driver | ${profiles:-(none)} | $modules | $result | $((run - bad - skipped)) passed, $bad failed, $skipped skipped | ${seconds} s |"
  echo "   $result: $run run, $bad failed, $skipped skipped, ${seconds} s" >&2
done

echo "$table" | tee target/compat-matrix.md
exit $failed
