#!/usr/bin/env bash
# CI's proof of the production steps (docs/deployment.md), without Docker: what the Dockerfile's
# stages do, on this machine.
#
#   bash scripts/check-production.sh
#
# 1. A clone of this repository's HEAD (committed files only) and `npm ci` in it, as the
#    Dockerfile's build stage starts.
# 2. scripts/build-production.sh into a scratch folder: the build, then `npm ci --omit=dev`. No dev
#    dependency may be there.
# 3. Two processes of `node dist/main.js` started together on a fresh PostgreSQL database, as
#    compose.yaml's two replicas (ADMIN_TOKEN and HOSTED_SCREEN_KEY set, as in production): both
#    migrate-or-wait and serve /readyz 200; exactly one creates the demo merchant; a token taken at
#    one and signed writes at both succeed and a wrong signature is refused
#    (scripts/signed-call.mjs); SIGTERM stops each with exit status 0.
# 4. One process started again on the migrated database: /readyz 200 (its start-up time is
#    printed), SIGTERM, exit status 0.
# 5. `npm start` in the clone (no dist/ yet) on the embedded database: it builds and serves.
#
# PostgreSQL: PRODUCTION_CHECK_PG (default postgres://postgres@127.0.0.1:5432), a server where
# that user may create databases; the database made here is dropped at the end.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
pg=${PRODUCTION_CHECK_PG:-postgres://postgres@127.0.0.1:5432}
work=$(mktemp -d)
db="mwa_production_check_$(date +%s)_$$"
pids=()

say() { echo "check-production: $* (at ${SECONDS}s)"; }
fail() { echo "check-production: FAILED: $*" >&2; exit 1; }

cleanup() {
  local status=$?
  for pid in "${pids[@]}"; do kill -KILL "$pid" 2>/dev/null || true; done
  if [ "$status" -ne 0 ]; then
    for log in "$work"/*.log; do
      [ -f "$log" ] && { echo "--- $log (last 40 lines)"; tail -n 40 "$log"; }
    done
  fi
  dropdb --maintenance-db="$pg/postgres" --if-exists --force "$db" >/dev/null 2>&1 || true
  rm -rf "$work"
  exit "$status"
}
trap cleanup EXIT

free_port() {
  node -e "const s = require('node:net').createServer().listen(0, '127.0.0.1', () => { console.log(s.address().port); s.close(); })"
}

# Waits until URL answers 200, or fails when the process PID ends or TIMEOUT seconds pass.
wait_ready() {
  local url=$1 pid=$2 timeout=$3 started=$SECONDS
  until node -e "fetch(process.argv[1]).then((r) => process.exit(r.status === 200 ? 0 : 1), () => process.exit(1))" "$url"; do
    alive "$pid" || fail "the process $pid serving $url ended before it was ready"
    [ $((SECONDS - started)) -lt "$timeout" ] || fail "$url did not answer 200 within ${timeout} s"
    sleep 0.2
  done
}

# Whether PID runs (a child that ended stays a zombie until waited for: not running).
alive() {
  [ -r "/proc/$1/stat" ] && [ "$(sed -E 's/^.*\) (.).*$/\1/' "/proc/$1/stat")" != Z ]
}

# Sends SIGTERM to TARGET (a pid, or -pgid for a process group) and waits for PID; sets `status`
# to its exit status; fails when it has not ended within 30 s.
terminate() {
  local target=$1 pid=$2 name=$3
  kill -TERM -- "$target"
  for _ in $(seq 1 300); do alive "$pid" || break; sleep 0.1; done
  alive "$pid" && fail "$name did not exit within 30 s of SIGTERM"
  status=0
  wait "$pid" || status=$?
}

# SIGTERM to the server itself: it must exit with status 0.
stop_cleanly() {
  terminate "$1" "$1" "$2"
  [ "$status" -eq 0 ] || fail "$2 exited with status $status after SIGTERM (expected 0)"
  say "$2: SIGTERM, exit status 0"
}

say "1. a clean clone of HEAD, npm ci"
git clone --quiet "$root" "$work/clone"
(cd "$work/clone" && npm ci --no-audit --no-fund --loglevel=error)

say "2. the production install (scripts/build-production.sh)"
sh "$work/clone/scripts/build-production.sh" "$work/app"
for dev in tsx esbuild typescript @types/node; do
  [ ! -e "$work/app/node_modules/$dev" ] || fail "the production install holds the dev dependency $dev"
done
[ ! -e "$work/app/src" ] || fail "the production install holds src/"

say "3. two processes at once on a fresh PostgreSQL database"
if ! pg_isready -d "$pg/postgres" -q; then
  pg_ctlcluster --skip-systemctl-redirect "$(ls /etc/postgresql | head -1)" main start || true
  for _ in $(seq 1 30); do pg_isready -d "$pg/postgres" -q && break; sleep 1; done
fi
createdb --maintenance-db="$pg/postgres" "$db"
admin_token="adm_$(node -p "require('node:crypto').randomBytes(24).toString('hex')")"
hosted_screen_key=$(node -p "require('node:crypto').randomBytes(32).toString('base64')")

# start NAME PORT ADMIN_PORT: `node dist/main.js` in the production install, as the container runs it.
start() {
  mkdir -p "$work/data-$1"
  (cd "$work/app" && exec env DATABASE_URL="$pg/$db" DATA_DIR="$work/data-$1" PORT="$2" ADMIN_PORT="$3" \
    ADMIN_TOKEN="$admin_token" HOSTED_SCREEN_KEY="$hosted_screen_key" LOG_LEVEL=warn \
    node --enable-source-maps dist/main.js >"$work/$1.log" 2>&1) &
  pids+=($!)
  started_pid=$!
}
port_a=$(free_port); admin_a=$(free_port); port_b=$(free_port); admin_b=$(free_port)
start a "$port_a" "$admin_a"; pid_a=$started_pid
start b "$port_b" "$admin_b"; pid_b=$started_pid
wait_ready "http://127.0.0.1:$port_a/readyz" "$pid_a" 180
wait_ready "http://127.0.0.1:$port_b/readyz" "$pid_b" 180
say "both processes answer /readyz 200"

credentials=$(ls "$work"/data-*/demo-credentials.json 2>/dev/null || true)
[ -n "$credentials" ] && [ "$(echo "$credentials" | wc -l)" -eq 1 ] || fail "expected one demo-credentials.json, found: ${credentials:-none}"
for file in admin-token hosted-screen-key; do
  ls "$work"/data-*/"$file" >/dev/null 2>&1 && fail "a process wrote $file although its variable is set"
done
node "$work/clone/scripts/signed-call.mjs" "$credentials" "http://127.0.0.1:$port_a" "http://127.0.0.1:$port_b"
node -e "
fetch(process.argv[1], { headers: { authorization: 'Bearer ' + process.argv[2] } })
  .then((r) => { if (r.status !== 200) { console.error('operator API with ADMIN_TOKEN: ' + r.status); process.exit(1); } })
" "http://127.0.0.1:$admin_a/admin/v1/openapi.json" "$admin_token" || fail "the operator API refused ADMIN_TOKEN"
say "the operator API accepts ADMIN_TOKEN"
stop_cleanly "$pid_a" "process a"
stop_cleanly "$pid_b" "process b"

say "4. a restart on the migrated database"
port_c=$(free_port)
began=$(node -p "Date.now()")
start c "$port_c" "$(free_port)"; pid_c=$started_pid
wait_ready "http://127.0.0.1:$port_c/readyz" "$pid_c" 60
say "restarted: /readyz 200 $(( $(node -p "Date.now()") - began )) ms after the start"
stop_cleanly "$pid_c" "process c"

say "5. npm start in the clone (no dist/ yet), on the embedded database"
[ ! -e "$work/clone/dist" ] || fail "the clone already has dist/"
port_d=$(free_port)
# Its own session: SIGTERM goes to npm's process group, as Ctrl-C in a terminal would send it.
(cd "$work/clone" && exec setsid env DATA_DIR="$work/data-d" PORT="$port_d" ADMIN_PORT="$(free_port)" LOG_LEVEL=warn \
  npm start >"$work/d.log" 2>&1) &
pid_d=$!
pids+=("$pid_d")
wait_ready "http://127.0.0.1:$port_d/readyz" "$pid_d" 240
grep -q 'Building dist/' "$work/d.log" || fail "npm start did not build dist/"
node "$work/clone/scripts/signed-call.mjs" "$work/data-d/demo-credentials.json" "http://127.0.0.1:$port_d"
terminate "-$pid_d" "$pid_d" "npm start"
say "npm start: built dist/, served, stopped by SIGTERM (npm's exit status $status)"

say "passed"
