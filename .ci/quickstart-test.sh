#!/usr/bin/env bash
# The README's quick start, followed in a fresh Maven project outside the reactor: installs this build's artifacts
# (parent, BOM, testkit, core, spring-adapter, test-support), writes a Spring Boot application whose pom.xml and
# @SpringBootTest are the README's own blocks (.ci/QuickStartProject.java), and runs that test: the application's
# guarded bulkOps on the emulated sharded cluster started by @EmulatedMongo, its round trips asserted. Spring Boot's
# managed versions (driver, Netty) are used as they are: no pin.
#
#   .ci/quickstart-test.sh                                   # in CI, after `mvn -B verify` (.ci/run)
#   QUICKSTART_MAVEN_REPO=/path/to/repo .ci/quickstart-test.sh   # install into a private local repository instead of ~/.m2
#   MVN_ARGS=-o .ci/quickstart-test.sh                       # offline, once the project's dependencies are downloaded
set -euo pipefail
cd "$(dirname "$0")/.."

args=(-B ${MVN_ARGS:-})
if [ -n "${QUICKSTART_MAVEN_REPO:-}" ]; then
  args+=("-Dmaven.repo.local=${QUICKSTART_MAVEN_REPO}")
fi

echo "quick start: installing this build's artifacts"
mvn "${args[@]}" -q install -DskipTests -Dspotless.check.skip=true -pl .,bom,testkit,core,spring-adapter,test-support

project="$(mktemp -d "${TMPDIR:-/tmp}/mwg-quickstart.XXXXXX")"
trap 'rm -rf "$project"' EXIT
java .ci/QuickStartProject.java README.md pom.xml "$project"

echo "quick start: building and testing the fresh project in $project"
(cd "$project" && mvn "${args[@]}" test)
echo "quick start: passed"
