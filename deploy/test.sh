#!/usr/bin/env bash
# ./deploy/test.sh [vitest args...] — install/build, then run the test suite against a throwaway
# Redis and a throwaway PostgreSQL cluster (the suites that run the service run on SQLite and on
# PostgreSQL), each on a free loopback port. Exits with vitest's exit code; both servers and
# their temp dir are always removed.
set -euo pipefail
cd "$(dirname "$(readlink -f "${BASH_SOURCE[0]}")")/.."

./deploy/install.sh
# The local-model tests (test/unit/llm-llama-cpp.test.ts, test/integration/rag-local-model.test.ts)
# run llama.cpp: install its opt-in runtime when it is missing (~10 s and 51 MB, npm packages
# only; ~1.5 s to check when present).
./deploy/llama.sh install

# The checked-in types of the core's proto must be what the proto generates (deploy/gen-proto.sh).
GEN=$(mktemp -d -t quarry-gen.XXXXXX)
./deploy/gen-proto.sh "$GEN/generated"
diff -r "$GEN/generated" core/rpc/generated >/dev/null || { rm -rf "$GEN"; echo "test.sh: core/rpc/generated differs from proto/ (run ./deploy/gen-proto.sh)" >&2; exit 1; }
rm -rf "$GEN"
# The tests and benchmarks are type-checked too (the build covers only what runs in production),
# beside the type-aware lint (eslint.config.js: floating and misused promises, unused code): both
# are single-threaded, and side by side they take ~50 s here instead of ~75.
TSC_LOG=$(mktemp -t quarry-tsc.XXXXXX)
npx --no -- tsc -p tsconfig.test.json > "$TSC_LOG" 2>&1 &
TSC_PID=$!
lint_ok=1
npx --no -- eslint --max-warnings 0 . || lint_ok=0
tsc_ok=1
wait "$TSC_PID" || tsc_ok=0
cat "$TSC_LOG"
rm -f "$TSC_LOG"
[ "$tsc_ok" = 1 ] || { echo "test.sh: type errors (tsc -p tsconfig.test.json)" >&2; exit 1; }
[ "$lint_ok" = 1 ] || { echo "test.sh: lint errors (npx eslint .)" >&2; exit 1; }
# The layering rules of ARCHITECTURE.md (.dependency-cruiser.cjs: no import cycles, core/domain and
# the shard threads import nothing of the services, the store calls no service).
npx --no -- depcruise core store facade workers deploy --config .dependency-cruiser.cjs || { echo "test.sh: layering violations (npx depcruise)" >&2; exit 1; }

TMP=$(mktemp -d -t quarry-test.XXXXXX)
# shellcheck disable=SC2317  # called from the EXIT trap
cleanup() {
  ./deploy/redis.sh stop "$TMP" || true
  ./deploy/postgres.sh stop "$TMP/pg" || true
  rm -rf "$TMP"
}
trap cleanup EXIT
# Turn signals into a normal exit so the EXIT trap runs (vitest gets Ctrl-C itself, same group).
trap 'exit 130' INT
trap 'exit 143' TERM

# A database per test stack (test/helpers/stack.ts hands them out in turn): with Redis's default
# 16, a stack that lived while 15 others started shared its database with the 16th, whose start
# emptied it and whose job workers then took its jobs (bulk deletes never ran).
TEST_REDIS_DATABASES=1024
# free-port releases the port before redis binds it, so another process can take it in between;
# a couple of retries make that race harmless.
started=0
for _ in 1 2 3; do
  PORT=$(./deploy/redis.sh free-port)
  if REDIS_DATABASES=$TEST_REDIS_DATABASES ./deploy/redis.sh start "$PORT" "$TMP"; then started=1; break; fi
  ./deploy/redis.sh stop "$TMP" || true
done
[ "$started" = 1 ] || { echo "test.sh: could not start a test Redis" >&2; exit 1; }
export QUARRY_TEST_REDIS_URL="redis://127.0.0.1:$PORT"

started=0
for _ in 1 2 3; do
  PG_PORT=$(./deploy/postgres.sh free-port)
  if ./deploy/postgres.sh start "$PG_PORT" "$TMP/pg"; then started=1; break; fi
  ./deploy/postgres.sh stop "$TMP/pg" || true
done
[ "$started" = 1 ] || { echo "test.sh: could not start a test PostgreSQL" >&2; exit 1; }
# The maintenance database: each test stack creates a database of its own there (test/helpers/pg.ts).
QUARRY_TEST_PG_URL=$(./deploy/postgres.sh url "$PG_PORT" postgres)
export QUARRY_TEST_PG_URL

# --no: never download vitest; it must come from node_modules (npm ci above).
set +e
npx --no vitest run "$@"
code=$?
set -e
exit "$code"
