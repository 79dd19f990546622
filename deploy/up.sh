#!/usr/bin/env bash
# ./deploy/up.sh — install, build and run quarry locally (HTTP API hosting the search core, job workers, Redis;
# QUARRY_CORE_IN_PROCESS=false runs the core as a process of its own).
#
# First run: generates an admin key (<data>/admin.env), creates a demo organisation, owner API key
# and dataset (<data>/demo.json). Every run prints the ids, the key and two curl commands, then
# waits; Ctrl-C stops everything cleanly. Later runs reuse the same data, key and dataset.
# QUARRY_DATABASE_URL=postgres://... stores into PostgreSQL instead of SQLite; QUARRY_LOCAL_POSTGRES=1
# runs a cluster of its own in <data>/postgres for that (README: "PostgreSQL").
set -euo pipefail
REPO=$(cd "$(dirname "$(readlink -f "${BASH_SOURCE[0]}")")/.." && pwd)
# A relative QUARRY_DATA_DIR means relative to where the user ran the script, not to the repo.
DATA=${QUARRY_DATA_DIR:-$REPO/.data}
case "$DATA" in /*) ;; *) DATA="$PWD/$DATA" ;; esac
cd "$REPO"

die() { echo "up.sh: $*" >&2; exit 1; }
say() { echo "up.sh: $*" >&2; }

./deploy/install.sh

# --- data dir and admin key -------------------------------------------------------------------
# The data dir holds keys: create it private (an existing one keeps its mode).
[ -d "$DATA" ] || (umask 077 && mkdir -p "$DATA")
DATA=$(cd "$DATA" && pwd)
export QUARRY_DATA_DIR="$DATA"

# core/config.ts accepts ADMIN_API_KEY or QUARRY_ADMIN_API_KEY; an explicit one is used and not saved.
if [ -z "${ADMIN_API_KEY:-}" ] && [ -n "${QUARRY_ADMIN_API_KEY:-}" ]; then
  ADMIN_API_KEY=$QUARRY_ADMIN_API_KEY
fi
ADMIN_SOURCE="from the environment"
if [ -z "${ADMIN_API_KEY:-}" ]; then
  ADMIN_SOURCE="in $DATA/admin.env"
  if [ -f "$DATA/admin.env" ]; then
    ADMIN_API_KEY=$(sed -n 's/^ADMIN_API_KEY=//p' "$DATA/admin.env" | head -n 1)
    [ -n "$ADMIN_API_KEY" ] || die "$DATA/admin.env has no ADMIN_API_KEY line; delete it to generate a new key"
  else
    # head reads a fixed amount so no pipe stage dies of SIGPIPE under pipefail; 1 KiB of random
    # bytes holds ~240 alphanumerics, and the loop covers the (astronomically unlikely) shortfall.
    raw=""
    while [ "${#raw}" -lt 32 ]; do
      raw+=$(head -c 1024 /dev/urandom | LC_ALL=C tr -dc 'A-Za-z0-9')
    done
    ADMIN_API_KEY="tr-${raw:0:32}"
    (umask 077 && printf 'ADMIN_API_KEY=%s\n' "$ADMIN_API_KEY" >"$DATA/admin.env.tmp")
    mv "$DATA/admin.env.tmp" "$DATA/admin.env"
    chmod 600 "$DATA/admin.env"
    say "generated an admin API key in $DATA/admin.env"
  fi
fi
export ADMIN_API_KEY

# --- process management -----------------------------------------------------------------------
STARTED_REDIS=0
STARTED_POSTGRES=0
RUNALL_PID=""
STOPPING=0

# Stops run-all, which stops its children and then the Redis it supervises, in that order, so
# workers can finish with Redis still there. A second Ctrl-C while waiting reaches run-all directly from the terminal
# (same process group) and makes it kill the children hard; this handler just keeps waiting.
# shellcheck disable=SC2317  # called from traps
cleanup() {
  local code=$1
  if [ "$STOPPING" = 1 ]; then return 0; fi
  STOPPING=1
  trap '' TERM
  if [ -n "$RUNALL_PID" ] && kill -0 "$RUNALL_PID" 2>/dev/null; then
    say "stopping quarry..."
    kill -TERM "$RUNALL_PID" 2>/dev/null || true
    # wait returns early when a trapped signal arrives, so loop until the process is really gone.
    while kill -0 "$RUNALL_PID" 2>/dev/null; do wait "$RUNALL_PID" 2>/dev/null || true; done
  fi
  # Normally already stopped by run-all; this catches a run-all that died before it could.
  if [ "$STARTED_REDIS" = 1 ]; then
    ./deploy/redis.sh stop "$DATA/redis" || true
  fi
  if [ "$STARTED_POSTGRES" = 1 ]; then
    ./deploy/postgres.sh stop "$DATA/postgres" || true
  fi
  exit "$code"
}
trap 'cleanup 0' INT TERM
trap 'cleanup $?' EXIT

# --- Redis --------------------------------------------------------------------------------------
# The Redis this script owns runs under run-all's supervision (restarted with backoff if it dies,
# same data dir and AOF); one left running by a run that was killed hard is stopped first (it
# persists its data on the way), so that exactly one server uses the data dir.
RUNALL_ARGS=()
if [ -z "${QUARRY_REDIS_URL:-}" ]; then
  REDIS_PORT=${QUARRY_REDIS_PORT:-6380}
  STARTED_REDIS=1
  ./deploy/redis.sh install
  ./deploy/redis.sh stop "$DATA/redis"
  if [ "$(timeout 2 redis-cli -h 127.0.0.1 -p "$REDIS_PORT" ping 2>/dev/null || true)" = "PONG" ]; then
    die "port $REDIS_PORT already answers as a Redis that up.sh did not start; set QUARRY_REDIS_PORT to another port (or QUARRY_REDIS_URL to use that Redis)"
  fi
  export QUARRY_REDIS_URL="redis://127.0.0.1:$REDIS_PORT"
  RUNALL_ARGS=(--redis-port "$REDIS_PORT" --redis-dir "$DATA/redis")
  REDIS_HINT=" (Redis log: $DATA/redis/redis.log)"
else
  say "using Redis at $QUARRY_REDIS_URL (not starting one)"
fi

# --- store ----------------------------------------------------------------------------------------
# SQLite in the data dir unless QUARRY_DATABASE_URL names a PostgreSQL database; with
# QUARRY_LOCAL_POSTGRES=1 this script runs a PostgreSQL cluster of its own in <data>/postgres
# (Debian's postgresql, installed when missing) on QUARRY_POSTGRES_PORT (default 5433).
DEMO_FILE="$DATA/demo.json"
if [ "${QUARRY_LOCAL_POSTGRES:-0}" = 1 ] && [ -z "${QUARRY_DATABASE_URL:-}" ]; then
  PG_PORT=${QUARRY_POSTGRES_PORT:-5433}
  STARTED_POSTGRES=1
  say "starting PostgreSQL in $DATA/postgres on 127.0.0.1:$PG_PORT..."
  ./deploy/postgres.sh start "$PG_PORT" "$DATA/postgres" || die "PostgreSQL did not start (log: $DATA/postgres/server.log)"
  ./deploy/postgres.sh createdb "$PG_PORT" quarry
  QUARRY_DATABASE_URL=$(./deploy/postgres.sh url "$PG_PORT" quarry)
  export QUARRY_DATABASE_URL
fi
if [ -n "${QUARRY_DATABASE_URL:-}" ]; then
  say "store: PostgreSQL at ${QUARRY_DATABASE_URL//:*@/:***@}"
  # The demo ids live in that database: remember them per database, not beside SQLite's.
  DEMO_FILE="$DATA/demo-postgres-$(printf '%s' "$QUARRY_DATABASE_URL" | sha256sum | cut -c1-12).json"
fi

# --- services -----------------------------------------------------------------------------------
node dist/deploy/run-all.js "${RUNALL_ARGS[@]}" &
RUNALL_PID=$!

HTTP_HOST=${QUARRY_HTTP_HOST:-127.0.0.1}
# A wildcard listen address is not something to connect to; loopback reaches it.
case "$HTTP_HOST" in 0.0.0.0 | :: | '[::]') HTTP_HOST=127.0.0.1 ;; esac
case "$HTTP_HOST" in *:*) [[ "$HTTP_HOST" == \[* ]] || HTTP_HOST="[$HTTP_HOST]" ;; esac
BASE_URL="http://$HTTP_HOST:${QUARRY_HTTP_PORT:-8090}"

# api METHOD PATH [BODY] — HTTP through Node's fetch (curl is not on every fresh Debian).
# Extra headers come from API_AUTH, API_ORG, API_DATASET. Prints the body on 2xx; otherwise prints
# a one-line description (status, request, body) and fails, so callers can put it in their error.
# shellcheck disable=SC2016  # the single-quoted text is JavaScript, not shell
api() {
  API_METHOD=$1 API_URL="$BASE_URL$2" API_BODY=${3:-} \
    API_AUTH=${API_AUTH:-} API_ORG=${API_ORG:-} API_DATASET=${API_DATASET:-} \
    node --input-type=module -e '
      const e = process.env;
      const headers = { "Content-Type": "application/json" };
      if (e.API_AUTH) headers["Authorization"] = e.API_AUTH;
      if (e.API_ORG) headers["TR-Organization"] = e.API_ORG;
      if (e.API_DATASET) headers["TR-Dataset"] = e.API_DATASET;
      try {
        const res = await fetch(e.API_URL, { method: e.API_METHOD, headers, body: e.API_BODY || undefined,
          signal: AbortSignal.timeout(10000) });
        const text = await res.text();
        if (res.ok) process.stdout.write(text);
        else { process.stdout.write(`HTTP ${res.status} from ${e.API_METHOD} ${e.API_URL}: ${text}`); process.exitCode = 1; }
      } catch (err) {
        process.stdout.write(`${e.API_METHOD} ${e.API_URL} failed: ${err.cause?.code ?? err.message}`);
        process.exitCode = 2;
      }
    '
}

# json_get FIELD — reads a JSON object on stdin and prints one top-level string field.
# shellcheck disable=SC2016  # the single-quoted text is JavaScript, not shell
json_get() {
  node -e '
    let s = ""; process.stdin.on("data", (d) => (s += d)).on("end", () => {
      const v = JSON.parse(s)[process.argv[1]];
      if (typeof v !== "string" || v === "") { console.error(`missing "${process.argv[1]}" in ${s}`); process.exit(1); }
      console.log(v);
    });' "$1"
}

say "waiting for $BASE_URL/api/health ..."
deadline=$((SECONDS + 60))
health=""
while :; do
  if ! kill -0 "$RUNALL_PID" 2>/dev/null; then
    wait "$RUNALL_PID" 2>/dev/null && rc=0 || rc=$?
    RUNALL_PID=""
    die "quarry exited during startup (exit code $rc); see the log lines above"
  fi
  if health=$(api GET /api/health); then break; fi
  if [ "$SECONDS" -ge "$deadline" ]; then
    die "GET /api/health did not answer 200 within 60 s; last answer: ${health:-<none>}${REDIS_HINT:-}"
  fi
  sleep 0.5
done

# --- demo organisation, key and dataset (first run only) ----------------------------------------
if [ ! -f "$DEMO_FILE" ]; then
  say "creating the demo organisation, API key and dataset..."
  org_json=$(API_AUTH=$ADMIN_API_KEY api POST /api/organization '{"name":"Demo"}') ||
    die "creating the demo organisation failed: $org_json"
  ORG_ID=$(json_get id <<<"$org_json")
  key_json=$(API_AUTH=$ADMIN_API_KEY API_ORG=$ORG_ID api POST /api/organization/api_key \
    '{"name":"demo owner key","role":2}') || die "creating the demo API key failed: $key_json"
  API_KEY=$(json_get api_key <<<"$key_json")
  # The dataset is created with the new key, which proves the key works before it is printed.
  ds_json=$(API_AUTH=$API_KEY API_ORG=$ORG_ID api POST /api/dataset \
    '{"dataset_name":"demo","tracking_id":"demo"}') || die "creating the demo dataset failed: $ds_json"
  DATASET_ID=$(json_get id <<<"$ds_json")
  ORG_ID=$ORG_ID DATASET_ID=$DATASET_ID API_KEY=$API_KEY node -e '
    const e = process.env;
    const demo = { organization_id: e.ORG_ID, dataset_id: e.DATASET_ID, api_key: e.API_KEY,
      created_at: new Date().toISOString() };
    process.stdout.write(JSON.stringify(demo, null, 2) + "\n");' >"$DEMO_FILE.tmp"
  chmod 600 "$DEMO_FILE.tmp"
  mv "$DEMO_FILE.tmp" "$DEMO_FILE"
else
  ORG_ID=$(json_get organization_id <"$DEMO_FILE")
  DATASET_ID=$(json_get dataset_id <"$DEMO_FILE")
  API_KEY=$(json_get api_key <"$DEMO_FILE")
fi

# --- summary ------------------------------------------------------------------------------------
cat <<EOF

================================================================================
quarry is running at $BASE_URL   (Ctrl-C stops it)

  organization id : $ORG_ID
  dataset id      : $DATASET_ID
  API key         : $API_KEY
  admin key       : $ADMIN_SOURCE
  data directory  : $DATA

Create a chunk:
  curl -sS -X POST '$BASE_URL/api/chunk' -H 'Authorization: $API_KEY' -H 'TR-Dataset: $DATASET_ID' -H 'Content-Type: application/json' -d '{"chunk_html":"<p>Hello from quarry</p>","tracking_id":"hello"}'

Get it back by tracking id:
  curl -sS '$BASE_URL/api/chunk/tracking_id/hello' -H 'Authorization: $API_KEY' -H 'TR-Dataset: $DATASET_ID'

(Creating a second chunk with tracking_id "hello" is refused with 400.)
EOF
command -v curl >/dev/null 2>&1 || echo "(curl is not installed: apt-get install -y curl)"
echo "================================================================================"

# Wait for run-all; a trapped Ctrl-C interrupts this wait and runs cleanup. The status of the
# wait that finds the process gone is its exit code (a second wait on a reaped pid would be 127).
while :; do
  if wait "$RUNALL_PID" 2>/dev/null; then rc=0; else rc=$?; fi
  kill -0 "$RUNALL_PID" 2>/dev/null || break
done
RUNALL_PID=""
say "quarry exited on its own (exit code $rc)"
exit "$rc"
