#!/usr/bin/env bash
# ./deploy/test.sh [vitest args...] — install/build, then run the test suite against a throwaway
# Redis and a throwaway PostgreSQL cluster (the suites that run the service run on SQLite and on
# PostgreSQL), each on a free loopback port. Exits with vitest's exit code; both servers and
# their temp dir are always removed.
set -euo pipefail
cd "$(dirname "$(readlink -f "${BASH_SOURCE[0]}")")/.."

# The static checks (deploy/check.sh: generated code, type-check of the tests, lint, layering) run
# beside a fresh install's native compile, which leaves one of the two cores idle otherwise.
./deploy/install.sh ./deploy/check.sh
# The local-model tests (test/unit/llm-llama-cpp.test.ts, test/integration/rag-local-model.test.ts)
# run llama.cpp: install its opt-in runtime when it is missing (~10 s and 51 MB, npm packages
# only; ~1.5 s to check when present).
./deploy/llama.sh install

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
