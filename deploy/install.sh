#!/usr/bin/env bash
# ./deploy/install.sh [command args...] — idempotent setup shared by up.sh and test.sh: Redis
# present, node_modules matching package-lock.json, fresh build in dist/. Quiet on success; on
# failure prints the tail of the failing step's output.
#
# A fresh install compiles better-sqlite3 from source (~2 min of one core). That compile runs
# beside the build and beside the optional command (test.sh passes its static checks,
# deploy/check.sh), which only need the packages' files; the script returns once all are done and
# fails when any failed.
set -euo pipefail
cd "$(dirname "$(readlink -f "${BASH_SOURCE[0]}")")/.."

die() { echo "install.sh: $*" >&2; exit 1; }

command -v node >/dev/null 2>&1 || die "node is not installed (Node 20 is required)"
command -v npm >/dev/null 2>&1 || die "npm is not installed"
node_major=$(node -p 'process.versions.node.split(".")[0]')
# package.json pins engines to Node 20: better-sqlite3 12.x and usearch 2.25 are the versions
# known to work there.
[ "$node_major" = "20" ] || die "Node 20 is required, found $(node --version)"

./deploy/redis.sh install

log=$(mktemp)
native_log=$(mktemp)
native_pid=""
# shellcheck disable=SC2317  # called from the EXIT trap
on_exit() {
  # An early exit must not leave the native compile writing into node_modules.
  [ -z "$native_pid" ] || kill -- "-$native_pid" 2>/dev/null || true
  rm -f "$log" "$native_log"
}
trap on_exit EXIT

# npm puts the cause at the top of its output and help text below it: show both ends.
fail_with_log() {
  if [ "$(wc -l <"$log")" -le 60 ]; then
    cat "$log" >&2
  else
    head -n 20 "$log" >&2
    echo "[...]" >&2
    tail -n 30 "$log" >&2
  fi
  die "$1 (output above)"
}

# npm ci deletes and recompiles node_modules (better-sqlite3 builds from source, ~2 min), so run
# it only when node_modules does not match the lock file. The lock's hash is stored in
# node_modules after a successful install; without that marker (node_modules made by a plain
# `npm install`), npm's own hidden lockfile being at least as new as package-lock.json says
# the tree is current.
[ -f package-lock.json ] || die "package-lock.json is missing; run npm install once and commit it"
lock_hash=$(sha256sum package-lock.json | cut -d' ' -f1)
marker=node_modules/.quarry-lock-hash
# Present from npm ci until its native compile succeeded: an install stopped in between is redone.
pending=node_modules/.quarry-native-pending
need_ci=1
if [ -f "$pending" ]; then
  need_ci=1
elif [ -f "$marker" ]; then
  [ "$(cat "$marker")" = "$lock_hash" ] && need_ci=0
elif [ -f node_modules/.package-lock.json ] && ! [ package-lock.json -nt node_modules/.package-lock.json ]; then
  need_ci=0
  echo "$lock_hash" >"$marker"
fi

if [ "$need_ci" = 1 ]; then
  # better-sqlite3 compiles with node-gyp, which needs make, a C++ compiler and python3.
  if ! command -v make >/dev/null 2>&1 || ! command -v g++ >/dev/null 2>&1 || ! command -v python3 >/dev/null 2>&1; then
    [ "$(id -u)" -eq 0 ] || die "make, g++ and python3 are needed to build better-sqlite3: apt-get install -y build-essential python3"
    echo "install.sh: installing build tools (build-essential, python3) with apt-get..." >&2
    { DEBIAN_FRONTEND=noninteractive apt-get update -q \
      && DEBIAN_FRONTEND=noninteractive apt-get install -y -q build-essential python3; } >"$log" 2>&1 </dev/null \
      || fail_with_log "apt-get install build-essential python3 failed"
  fi
  echo "install.sh: installing dependencies (npm ci, then compiling better-sqlite3: ~2 min the first time)..." >&2
  # --ignore-scripts: the packages' install scripts (the native compiles) run below, in the background.
  if ! npm ci --ignore-scripts --no-audit --no-fund >"$log" 2>&1 </dev/null; then
    # The reachable registry lacks some other-platform optional packages (e.g. the darwin and
    # win32 builds of @msgpackr-extract), so the lock file cannot list them and npm ci's
    # strict sync check rejects it. npm install --no-save installs the same locked versions
    # (package.json pins exact ones) without rewriting package-lock.json.
    grep -q 'in sync' "$log" || fail_with_log "npm ci failed"
    echo "install.sh: package-lock.json is not in sync for npm ci; using npm install --no-save" >&2
    npm install --ignore-scripts --no-save --no-audit --no-fund >"$log" 2>&1 </dev/null || fail_with_log "npm install failed"
  fi
  # npm rebuild runs the install scripts npm ci skipped. In a process group of its own (setsid),
  # so that an early exit of this script stops the compilers too (the EXIT trap).
  touch "$pending"
  setsid npm rebuild >"$native_log" 2>&1 </dev/null &
  native_pid=$!
fi

build_ok=1
npm run build --silent >"$log" 2>&1 </dev/null || build_ok=0
cmd_ok=1
if [ "$build_ok" = 1 ] && [ "$#" -gt 0 ]; then
  "$@" || cmd_ok=0
fi
if [ -n "$native_pid" ]; then
  native_ok=1
  wait "$native_pid" || native_ok=0
  native_pid=""
  [ "$native_ok" = 1 ] || { cp "$native_log" "$log"; fail_with_log "compiling the native modules (npm rebuild) failed"; }
  # Only now is node_modules complete: the marker lets the next run skip npm ci.
  echo "$lock_hash" >"$marker"
  rm -f "$pending"
fi
[ "$build_ok" = 1 ] || fail_with_log "npm run build failed"
[ "$cmd_ok" = 1 ] || die "$1 failed"
