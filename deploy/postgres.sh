#!/usr/bin/env bash
# Local PostgreSQL for quarry (the store beyond one machine; SQLite is the default).
#
#   deploy/postgres.sh start <port> <dir>   initdb <dir> if empty, start the server on 127.0.0.1:<port>
#   deploy/postgres.sh stop <dir>           stop the cluster in <dir> (fast shutdown)
#   deploy/postgres.sh url <port> [db]      print the connection URL (database default: quarry)
#   deploy/postgres.sh createdb <port> <db> create a database if it does not exist
#   deploy/postgres.sh free-port            print a free loopback TCP port
#   deploy/postgres.sh install              install Debian's postgresql if it is missing
#
# initdb and postgres refuse to run as root, so as root the cluster belongs to the `postgres`
# user that Debian's package creates. Connections are trusted on loopback only (listen_addresses
# is 127.0.0.1 and the socket lives in <dir>): this is a cluster for one machine's own processes
# and tests, not one to expose.
set -euo pipefail

die() { echo "postgres.sh: $*" >&2; exit 1; }

# Debian installs the server binaries outside PATH.
bindir() {
  local d
  for d in /usr/lib/postgresql/*/bin; do
    if [ -x "$d/pg_ctl" ]; then echo "$d"; return 0; fi
  done
  if command -v pg_ctl >/dev/null 2>&1; then dirname "$(command -v pg_ctl)"; return 0; fi
  return 1
}

install_postgres() {
  if bindir >/dev/null && command -v psql >/dev/null 2>&1; then return 0; fi
  command -v apt-get >/dev/null 2>&1 || die "PostgreSQL is missing and apt-get is not available; install PostgreSQL 15 yourself"
  [ "$(id -u)" -eq 0 ] || die "PostgreSQL is missing; run as root or install it: apt-get install -y postgresql"
  echo "postgres.sh: installing postgresql with apt-get..." >&2
  local log
  log=$(mktemp)
  if ! { DEBIAN_FRONTEND=noninteractive apt-get update -q \
      && DEBIAN_FRONTEND=noninteractive apt-get install -y -q postgresql; } >"$log" 2>&1 </dev/null; then
    tail -n 30 "$log" >&2
    rm -f "$log"
    die "apt-get install postgresql failed (output above)"
  fi
  rm -f "$log"
  bindir >/dev/null || die "pg_ctl still not found after apt-get install postgresql"
}

# Runs a command as the cluster's owner: the postgres user when we are root, else ourselves.
as_owner() {
  if [ "$(id -u)" -eq 0 ]; then
    id postgres >/dev/null 2>&1 || die "running as root needs the postgres user (Debian's postgresql package creates it)"
    # runuser keeps no tty and needs no password; the environment is passed explicitly.
    runuser -u postgres -- env PATH="$PATH" "$@"
  else
    "$@"
  fi
}

check_port() {
  local port=${1:-}
  [[ "$port" =~ ^[0-9]+$ ]] && [ "$port" -ge 1 ] && [ "$port" -le 65535 ] || die "bad port: ${port:-<none>}"
}

# A postmaster killed with SIGKILL whose parent does not reap it (a container's init often does
# not) stays a zombie: its pid still answers kill -0, so pg_ctl and the postmaster's own lock-file
# check take the server for running, and it never starts again. Such lock files are removed.
clear_stale_pid() {
  local dir=$1 pid state
  [ -f "$dir/postmaster.pid" ] || return 0
  pid=$(head -n 1 "$dir/postmaster.pid" | tr -dc '0-9')
  [ -n "$pid" ] || return 0
  state=$(sed -n 's/^[0-9]* (.*) \([A-Z]\) .*/\1/p' "/proc/$pid/stat" 2>/dev/null || true)
  if [ -z "$state" ] || [ "$state" = Z ]; then
    echo "postgres.sh: removing the lock file of a PostgreSQL that is gone (pid $pid${state:+, a zombie})" >&2
    # The socket's lock file (the socket lives in <dir>) names the same pid.
    rm -f "$dir/postmaster.pid" "$dir"/.s.PGSQL.*
  fi
}

start() {
  local port=${1:-} dir=${2:-}
  [ -n "$port" ] && [ -n "$dir" ] || die "usage: postgres.sh start <port> <dir>"
  check_port "$port"
  install_postgres
  local bin
  bin=$(bindir)
  mkdir -p "$dir"
  dir=$(cd "$dir" && pwd)
  if [ "$(id -u)" -eq 0 ]; then
    chown postgres: "$dir"
    # The postgres user must reach the directory: a mktemp -d parent is 0700 and root's own.
    local up=$dir
    while [ "$up" != / ]; do
      up=$(dirname "$up")
      if ! runuser -u postgres -- test -x "$up"; then
        echo "postgres.sh: letting the postgres user traverse $up (chmod o+x) to reach $dir" >&2
        chmod o+x "$up"
      fi
    done
  fi
  if [ ! -f "$dir/PG_VERSION" ]; then
    # C locale and UTF-8: byte order for text (the schema asks for it per column too) and any text.
    as_owner "$bin/initdb" -D "$dir" -A trust -U postgres -E UTF8 --locale=C >"$dir/../initdb-$(basename "$dir").log" 2>&1 ||
      { cat "$dir/../initdb-$(basename "$dir").log" >&2; die "initdb failed"; }
  fi
  clear_stale_pid "$dir"
  if as_owner "$bin/pg_ctl" -D "$dir" status >/dev/null 2>&1; then
    [ "$(cat "$dir/quarry.port" 2>/dev/null)" = "$port" ] || die "a PostgreSQL already runs in $dir on another port; stop it first: deploy/postgres.sh stop $dir"
    echo "postgres.sh: reusing the PostgreSQL running in $dir on 127.0.0.1:$port" >&2
    return 0
  fi
  echo "$port" >"$dir/quarry.port"
  # fsync stays on (the default): an acknowledged write must survive a power cut here too.
  as_owner "$bin/pg_ctl" -D "$dir" -l "$dir/server.log" -w -t 60 \
    -o "-c listen_addresses=127.0.0.1 -p $port -c unix_socket_directories='$dir' -c max_connections=200" start >/dev/null ||
    { tail -n 20 "$dir/server.log" >&2 || true; die "PostgreSQL did not start on 127.0.0.1:$port (log: $dir/server.log)"; }
}

stop() {
  local dir=${1:-}
  [ -n "$dir" ] || die "usage: postgres.sh stop <dir>"
  [ -f "$dir/PG_VERSION" ] || return 0
  clear_stale_pid "$dir"
  local bin
  bin=$(bindir) || return 0
  as_owner "$bin/pg_ctl" -D "$dir" status >/dev/null 2>&1 || return 0
  as_owner "$bin/pg_ctl" -D "$dir" -m fast -w -t 30 stop >/dev/null ||
    as_owner "$bin/pg_ctl" -D "$dir" -m immediate -w stop >/dev/null || true
}

url() {
  local port=${1:-} db=${2:-quarry}
  check_port "$port"
  echo "postgres://postgres@127.0.0.1:$port/$db"
}

createdb() {
  local port=${1:-} db=${2:-}
  check_port "$port"
  [[ "$db" =~ ^[a-z_][a-z0-9_]*$ ]] || die "bad database name: ${db:-<none>}"
  local exists
  exists=$(psql -h 127.0.0.1 -p "$port" -U postgres -d postgres -tAc "SELECT 1 FROM pg_database WHERE datname = '$db'")
  [ "$exists" = 1 ] || psql -h 127.0.0.1 -p "$port" -U postgres -d postgres -qc "CREATE DATABASE $db" >/dev/null
}

free_port() {
  node -e "const s=require('node:net').createServer();s.listen(0,'127.0.0.1',()=>{console.log(s.address().port);s.close();})"
}

cmd=${1:-}
[ $# -gt 0 ] && shift
case "$cmd" in
  start) start "$@" ;;
  stop) stop "$@" ;;
  url) url "$@" ;;
  createdb) createdb "$@" ;;
  free-port) free_port ;;
  install) install_postgres ;;
  *) die "usage: postgres.sh start <port> <dir> | stop <dir> | url <port> [db] | createdb <port> <db> | free-port | install" ;;
esac
