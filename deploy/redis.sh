#!/usr/bin/env bash
# Local Redis for quarry (BullMQ queues and caches; the system of record is the SQL store).
#
#   deploy/redis.sh start <port> <dir>   start redis-server on 127.0.0.1:<port>, data/pid/log in <dir>
#   deploy/redis.sh run <port> <dir>     the same server in the foreground (exec), for a supervisor
#                                        (deploy/run-all.ts) that restarts it when it dies
#   deploy/redis.sh stop <dir>           stop the instance whose pidfile is in <dir>
#   deploy/redis.sh free-port            print a free loopback TCP port
#   deploy/redis.sh install              install redis-server via apt if it is missing
#
# No systemd on the target machines, so redis-server runs daemonized with its own pidfile.
set -euo pipefail

die() { echo "redis.sh: $*" >&2; exit 1; }

# Installs redis-server from Debian when missing. Runs `apt-get update` once, only when needed,
# because a fresh machine has empty package lists.
install_redis() {
  if command -v redis-server >/dev/null 2>&1 && command -v redis-cli >/dev/null 2>&1; then
    return 0
  fi
  command -v apt-get >/dev/null 2>&1 || die "redis-server is missing and apt-get is not available; install Redis 7 yourself"
  local sudo=()
  if [ "$(id -u)" -ne 0 ]; then
    command -v sudo >/dev/null 2>&1 || die "redis-server is missing; run as root or install it: apt-get install -y redis-server"
    sudo=(sudo)
  fi
  echo "redis.sh: installing redis-server with apt-get..." >&2
  local log
  log=$(mktemp)
  if ! { "${sudo[@]}" env DEBIAN_FRONTEND=noninteractive apt-get update -q \
      && "${sudo[@]}" env DEBIAN_FRONTEND=noninteractive apt-get install -y -q redis-server; } >"$log" 2>&1 </dev/null; then
    tail -n 30 "$log" >&2
    rm -f "$log"
    die "apt-get install redis-server failed (output above)"
  fi
  rm -f "$log"
  command -v redis-server >/dev/null 2>&1 || die "redis-server still not found after apt-get install"
}

# Prints the pid from <dir>/redis.pid if that process is alive and is a redis-server
# (the pid could have been reused after a crash), else nothing.
live_pid() {
  local dir=$1 pid
  [ -f "$dir/redis.pid" ] || return 0
  pid=$(tr -dc '0-9' <"$dir/redis.pid")
  [ -n "$pid" ] || return 0
  if kill -0 "$pid" 2>/dev/null && grep -q redis "/proc/$pid/comm" 2>/dev/null; then
    echo "$pid"
  fi
}

# redis-cli waits forever for a reply, so a port held by something that accepts but never answers
# would hang the caller: bound each ping.
ping_port() {
  timeout 2 redis-cli -h 127.0.0.1 -p "$1" ping 2>/dev/null || true
}

# The server's settings, shared by start (daemonized) and run (foreground, supervised).
# Persistence: appendonly with `appendfsync everysec`, not `always`. Redis holds only queues and
# caches here; every write a client sees acknowledged is already committed in the SQL store.
# everysec loses at most ~1 s of queue writes and only on an OS crash or power loss (a crash of
# redis-server itself loses nothing: the data is in the page cache), while `always` puts an
# fsync on each of the ~10 commands a BullMQ job costs and caps bulk ingestion at disk latency.
# noeviction: BullMQ requires it; evicting a job key would corrupt a queue.
# No config file: every setting is explicit so the instance does not depend on /etc/redis.
# REDIS_DATABASES (default Redis's 16): test.sh asks for more, so that every test stack of a run
# gets a database of its own (test/helpers/stack.ts).
server_args() {
  local port=$1 dir=$2
  SERVER_ARGS=(--bind 127.0.0.1 --port "$port" --protected-mode yes
    --dir "$dir" --pidfile "$dir/redis.pid" --logfile "$dir/redis.log"
    --appendonly yes --appendfsync everysec
    --maxmemory-policy noeviction --databases "${REDIS_DATABASES:-16}")
}

# Checks the arguments of start/run and makes the dir; prints the absolute dir.
check_args() {
  local port=${1:-} dir=${2:-}
  if [ -z "$port" ] || [ -z "$dir" ]; then die "usage: redis.sh start|run <port> <dir>"; fi
  if ! [[ "$port" =~ ^[0-9]+$ ]] || [ "$port" -lt 1 ] || [ "$port" -gt 65535 ]; then die "bad port: $port"; fi
  mkdir -p "$dir"
  (cd "$dir" && pwd)
}

# Foreground server for a supervisor: exec, so the supervisor's child is redis-server itself and
# its signals (SIGTERM: persist and exit) reach it directly. Never two servers over one AOF.
run() {
  local port=${1:-} dir
  dir=$(check_args "$@")
  command -v redis-server >/dev/null 2>&1 || die "redis-server is missing: deploy/redis.sh install"
  local pid
  pid=$(live_pid "$dir")
  [ -z "$pid" ] || die "a redis-server (pid $pid) already uses $dir; stop it first: deploy/redis.sh stop $dir"
  rm -f "$dir/redis.pid"
  if [ "$(ping_port "$port")" = "PONG" ]; then
    die "port $port already answers as a Redis that this script did not start; set another port"
  fi
  echo "$port" >"$dir/redis.port"
  server_args "$port" "$dir"
  exec redis-server "${SERVER_ARGS[@]}" --daemonize no </dev/null
}

start() {
  local port=${1:-} dir=${2:-}
  if [ -z "$port" ] || [ -z "$dir" ]; then die "usage: redis.sh start <port> <dir>"; fi
  if ! [[ "$port" =~ ^[0-9]+$ ]] || [ "$port" -lt 1 ] || [ "$port" -gt 65535 ]; then die "bad port: $port"; fi
  install_redis
  mkdir -p "$dir"
  dir=$(cd "$dir" && pwd)

  local pid
  pid=$(live_pid "$dir")
  if [ -n "$pid" ]; then
    # Already running from this dir (e.g. a previous run was killed hard): reuse it if it is on
    # the requested port, otherwise refuse rather than run two servers over one AOF.
    if [ "$(cat "$dir/redis.port" 2>/dev/null)" = "$port" ] && [ "$(ping_port "$port")" = "PONG" ]; then
      echo "redis.sh: reusing redis-server (pid $pid) on 127.0.0.1:$port" >&2
      return 0
    fi
    die "a redis-server (pid $pid) already uses $dir on another port; stop it first: deploy/redis.sh stop $dir"
  fi
  rm -f "$dir/redis.pid"
  if [ "$(ping_port "$port")" = "PONG" ]; then
    die "port $port already answers as a Redis that this script did not start; set another port"
  fi

  echo "$port" >"$dir/redis.port"
  # The log is kept across runs; remember where this run's lines start.
  local log_start=1
  [ -f "$dir/redis.log" ] && log_start=$(($(stat -c %s "$dir/redis.log") + 1))
  server_args "$port" "$dir"
  if ! redis-server "${SERVER_ARGS[@]}" --daemonize yes </dev/null; then
    die "redis-server failed to start; see $dir/redis.log"
  fi

  # Wait for PONG (LOADING replies while the AOF is replayed do not count).
  local deadline=$((SECONDS + 20))
  while [ "$(ping_port "$port")" != "PONG" ]; do
    if [ "$SECONDS" -ge "$deadline" ]; then
      tail -n 20 "$dir/redis.log" >&2 2>/dev/null || true
      die "redis-server on 127.0.0.1:$port did not answer PING within 20 s (log: $dir/redis.log)"
    fi
    # A daemon that fails early (port taken, bad AOF) exits before or after writing its pidfile;
    # spot either case and fail now instead of waiting out the timeout.
    if { [ -f "$dir/redis.pid" ] && [ -z "$(live_pid "$dir")" ]; } ||
      tail -c "+$log_start" "$dir/redis.log" 2>/dev/null | grep -qiE 'aborting|fatal|bad file format'; then
      tail -n 20 "$dir/redis.log" >&2 2>/dev/null || true
      die "redis-server exited during startup on 127.0.0.1:$port (log: $dir/redis.log)"
    fi
    sleep 0.1
  done
}

stop() {
  local dir=${1:-}
  [ -n "$dir" ] || die "usage: redis.sh stop <dir>"
  [ -d "$dir" ] || return 0
  local pid port
  pid=$(live_pid "$dir")
  if [ -z "$pid" ]; then
    rm -f "$dir/redis.pid"
    return 0
  fi
  port=$(cat "$dir/redis.port" 2>/dev/null || true)
  # SHUTDOWN flushes the AOF and writes the final snapshot; SIGTERM does the same if redis-cli
  # cannot reach the server, and SIGKILL is the last resort after 20 s.
  if [ -n "$port" ]; then
    timeout 10 redis-cli -h 127.0.0.1 -p "$port" shutdown >/dev/null 2>&1 || true
  fi
  local i
  for i in $(seq 1 200); do
    kill -0 "$pid" 2>/dev/null || break
    if [ "$i" -eq 20 ]; then kill -TERM "$pid" 2>/dev/null || true; fi
    sleep 0.1
  done
  if kill -0 "$pid" 2>/dev/null; then
    echo "redis.sh: redis-server (pid $pid) did not stop within 20 s; killing it" >&2
    kill -KILL "$pid" 2>/dev/null || true
    while kill -0 "$pid" 2>/dev/null; do sleep 0.1; done
  fi
  rm -f "$dir/redis.pid"
}

free_port() {
  # Port 0 lets the kernel pick a free port; there is a small race until the caller binds it.
  node -e "const s=require('node:net').createServer();s.listen(0,'127.0.0.1',()=>{console.log(s.address().port);s.close();})"
}

cmd=${1:-}
[ $# -gt 0 ] && shift
case "$cmd" in
  start) start "$@" ;;
  run) run "$@" ;;
  stop) stop "$@" ;;
  free-port) free_port ;;
  install) install_redis ;;
  *) die "usage: redis.sh start <port> <dir> | run <port> <dir> | stop <dir> | free-port | install" ;;
esac
