#!/usr/bin/env bash
# Compares two commits of mongo-write-guard with measures anyone can run, side by side in one session:
#   1. class sizes: lines per top-level class (one .java file) of core and testkit main, the largest 15 of each,
#      and how many are over 400 lines;
#   2. public top-level types per package of core and testkit main;
#   3. `duplicates` over the whole tree (the pairs of places sharing six or more lines);
#   4. the wall time of core's unit tests (one `mvn -o test` per commit, testkit's own tests filtered out) and the
#      tests run, from surefire's reports;
#   5. the lab's `overhead` and `latency` scenarios (--json), alternately with each commit's lab jar
#      (before, after, before, after, ...), and the guarded-to-driver ratios of each run.
# Each commit gets a scratch git worktree (removed at the end) where its lab jar is built with `package`, never
# `install`. Needs git, Maven with the dependencies in ~/.m2 (it runs offline), Java 17, python3; `duplicates` is
# optional (skipped when not on PATH).
#
# Usage: docs/measure-renovation.sh BEFORE AFTER [OUT_DIR] [LAB_ROUNDS]
#   BEFORE, AFTER  commits (anything `git rev-parse` takes)
#   OUT_DIR        where the raw outputs and summary.md go (default: a new directory under /tmp)
#   LAB_ROUNDS     how many (before, after) pairs of lab runs (default 2)
# Environment: SKIP_TESTS=1 leaves out step 4, SKIP_LAB=1 step 5 (and the lab jars' builds): with both, nothing is
# built, and steps 1 to 3 read the sources only.
set -euo pipefail

before_rev=${1:?usage: $0 BEFORE AFTER [OUT_DIR] [LAB_ROUNDS]}
after_rev=${2:?usage: $0 BEFORE AFTER [OUT_DIR] [LAB_ROUNDS]}
out=${3:-$(mktemp -d /tmp/measure-renovation.XXXXXX)}
rounds=${4:-2}
repo=$(git rev-parse --show-toplevel)
work=$(mktemp -d /tmp/measure-renovation-trees.XXXXXX)
mkdir -p "$out"
summary="$out/summary.md"

cleanup() {
    for side in before after; do
        if [ -d "$work/$side" ]; then
            git -C "$repo" worktree remove --force "$work/$side" || true
        fi
    done
    rm -rf "$work"
}
trap cleanup EXIT

say() { echo "$*" | tee -a "$summary"; }

: >"$summary"
say "# Renovation, measured: $(git -C "$repo" rev-parse --short "$before_rev") (before) vs $(git -C "$repo" rev-parse --short "$after_rev") (after)"
say ""
say "Started $(date -u '+%Y-%m-%d %H:%M UTC') on $(nproc) cores; load average $(cut -d' ' -f1-3 /proc/loadavg)."

for side in before after; do
    rev=$([ "$side" = before ] && echo "$before_rev" || echo "$after_rev")
    git -C "$repo" worktree add --detach "$work/$side" "$rev" >/dev/null
done

# 1 and 2: sizes and public types, read from the sources only.
for side in before after; do
    tree="$work/$side"
    say ""
    say "## $side: class sizes (lines per file, main sources)"
    for module in core testkit; do
        files=$(find "$tree/$module/src/main/java" -name '*.java' ! -name package-info.java ! -name module-info.java)
        # shellcheck disable=SC2086
        wc -l $files | grep -v ' total$' | sort -rn >"$out/$side-$module-sizes.txt"
        over=$(awk '$1 > 400' "$out/$side-$module-sizes.txt" | wc -l)
        count=$(wc -l <"$out/$side-$module-sizes.txt")
        say ""
        say "$module: $count files, $over over 400 lines; the largest 15:"
        say '```'
        head -15 "$out/$side-$module-sizes.txt" | sed "s|$tree/$module/src/main/java/||" | tee -a "$summary"
        echo '```' >>"$summary"
    done
    say ""
    say "## $side: public top-level types per package"
    for module in core testkit; do
        root="$tree/$module/src/main/java"
        find "$root" -name '*.java' ! -name package-info.java ! -name module-info.java -print0 \
            | xargs -0 grep -lE '^public ((final|abstract|sealed|non-sealed|static) )*(class|interface|enum|record|@interface) ' \
            | xargs -n1 dirname | sed "s|$root/||; s|/|.|g" | sort | uniq -c | sort -k2 >"$out/$side-$module-public.txt"
        say ""
        say "$module: $(awk '{n += $1} END {print n}' "$out/$side-$module-public.txt") public types"
        say '```'
        tee -a "$summary" <"$out/$side-$module-public.txt"
        echo '```' >>"$summary"
    done
done

# 3: duplicates over the whole tree.
if command -v duplicates >/dev/null; then
    say ""
    say "## duplicates (whole tree, six or more shared lines)"
    for side in before after; do
        duplicates --repo "$work/$side" --most 200 --seconds 600 >"$out/$side-duplicates.txt" 2>&1 || true
        say "- $side: $(head -1 "$out/$side-duplicates.txt")"
    done
fi

# The lab jars, built in each tree (only for step 5: step 4 builds what core's tests need itself).
if [ "${SKIP_LAB:-0}" != 1 ]; then
    for side in before after; do
        (cd "$work/$side" && mvn -B -q -o -DskipTests -Dspotless.check.skip=true package -pl benchmarks -am) \
            >"$out/$side-build.log" 2>&1
        cp "$work/$side/benchmarks/target/lab.jar" "$out/lab-$side.jar"
    done
fi

# 4: core's unit tests, one run per commit (testkit's own tests, which -am would also run, filtered out).
if [ "${SKIP_TESTS:-0}" != 1 ]; then
    say ""
    say "## core's unit tests (mvn -B -o test -pl core -am -Dtest='!io.github.mongowriteguard.testkit.**')"
    for side in before after; do
        started=$(date +%s)
        status=passed
        (cd "$work/$side" && mvn -B -o test -pl core -am -Dspotless.check.skip=true \
            -Dtest='!io.github.mongowriteguard.testkit.**' -Dsurefire.failIfNoSpecifiedTests=false) \
            >"$out/$side-tests.log" 2>&1 || status=FAILED
        seconds=$(($(date +%s) - started))
        counts=$(python3 - "$work/$side/core/target/surefire-reports" <<'EOF'
import glob, sys, xml.etree.ElementTree as ET
tests = failures = skipped = 0
total = 0.0
for f in glob.glob(sys.argv[1] + "/TEST-*.xml"):
    s = ET.parse(f).getroot()
    tests += int(s.get("tests", 0)); skipped += int(s.get("skipped", 0))
    failures += int(s.get("failures", 0)) + int(s.get("errors", 0)); total += float(s.get("time", 0))
print(f"{tests} tests, {failures} failed, {skipped} skipped; {total:.0f} s inside surefire")
EOF
)
        say "- $side: $status in ${seconds} s wall ($counts); load average after: $(cut -d' ' -f1-3 /proc/loadavg)"
    done
fi

# 5: the lab, alternately with each jar.
if [ "${SKIP_LAB:-0}" != 1 ]; then
    for round in $(seq 1 "$rounds"); do
        for side in before after; do
            for scenario in overhead latency; do
                java -jar "$out/lab-$side.jar" "$scenario" --progress none --json \
                    >"$out/$side-$scenario-$round.json" 2>"$out/$side-$scenario-$round.err"
            done
        done
    done
    say ""
    say "## lab ratios, guarded / driver (lower is better; runs alternated before, after, before, after)"
    python3 - "$out" "$rounds" <<'EOF' | tee -a "$summary"
import json, sys
out, rounds = sys.argv[1], int(sys.argv[2])
def ratios(side, r):
    ov = json.load(open(f"{out}/{side}-overhead-{r}.json"))
    med = {x["client"]: x["medianMillis"] for x in ov["results"]}
    lat = json.load(open(f"{out}/{side}-latency-{r}.json"))
    ms = {(x["client"], x["shard"]): x["millis"] for x in lat["results"]}
    return (med["guarded"] / med["driver-ordered"], med["guarded"], med["driver-ordered"],
            ms[("guarded", "normal")] / ms[("driver-unordered", "normal")],
            ms[("guarded", "slow")] / ms[("driver-unordered", "slow")],
            ms[("guarded", "normal")], ms[("driver-unordered", "normal")])
print("| run | side | overhead guarded/driver (ms) | latency normal shard guarded/driver (ms) | latency slow shard |")
print("| --- | --- | --- | --- | --- |")
for r in range(1, rounds + 1):
    for side in ("before", "after"):
        o, g, d, n, s, gn, dn = ratios(side, r)
        print(f"| {r} | {side} | {o:.2f} ({g:.1f} / {d:.1f}) | {n:.2f} ({gn:.1f} / {dn:.1f}) | {s:.2f} |")
EOF
fi
say ""
say "Finished $(date -u '+%Y-%m-%d %H:%M UTC'); load average $(cut -d' ' -f1-3 /proc/loadavg). Raw outputs in $out."
