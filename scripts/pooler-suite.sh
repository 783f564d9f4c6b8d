#!/usr/bin/env bash
# The PostgreSQL suite through PgBouncer in transaction mode (docs/scaling.md "Behind a pooler"):
# a PgBouncer of its own on a free port in front of the PostgreSQL on 127.0.0.1:5432 (every
# database, `* =`), the suite's database reached through it with DATABASE_POOLER=transaction, and
# a direct URL for what a pooler cannot carry: the harness's CREATE/DROP DATABASE under a session
# lock (TEST_DATABASE_ADMIN_URL) and the services' LISTEN (DATABASE_LISTEN_URL, set per file).
# Needs pgbouncer (Debian: apt-get install pgbouncer); `npm test` does not. Arguments go to npm test.
set -euo pipefail
cd "$(dirname "$0")/.."
command -v pgbouncer >/dev/null || { echo "pgbouncer is not installed (apt-get install pgbouncer)" >&2; exit 1; }
pg_host=127.0.0.1
pg_port="${PGPORT:-5432}"
dir="$(mktemp -d)"
port="$(node -e "const s=require('net').createServer();s.listen(0,'127.0.0.1',()=>{console.log(s.address().port);s.close()})")"
cat >"$dir/pgbouncer.ini" <<EOF
[databases]
* = host=$pg_host port=$pg_port
[pgbouncer]
listen_addr = 127.0.0.1
listen_port = $port
unix_socket_dir =
auth_type = trust
auth_file = $dir/userlist.txt
pool_mode = transaction
max_client_conn = 2000
default_pool_size = 10
ignore_startup_parameters = extra_float_digits,options
logfile = $dir/pgbouncer.log
pidfile = $dir/pgbouncer.pid
EOF
echo '"postgres" ""' >"$dir/userlist.txt"
if [ "$(id -u)" = 0 ]; then
  chown -R postgres "$dir"
  runuser -u postgres -- pgbouncer -d "$dir/pgbouncer.ini"
else
  pgbouncer -d "$dir/pgbouncer.ini"
fi
db="mwa_pooled_$(date +%s)_$$"
cleanup() {
  kill "$(cat "$dir/pgbouncer.pid" 2>/dev/null)" 2>/dev/null || true
  for name in $(psql -h "$pg_host" -p "$pg_port" -U postgres -Atc "SELECT datname FROM pg_database WHERE datname = '$db' OR starts_with(datname, '${db}_')" 2>/dev/null); do
    dropdb -h "$pg_host" -p "$pg_port" -U postgres --if-exists --force "$name" >/dev/null 2>&1 || true
  done
  rm -rf "$dir"
}
trap cleanup EXIT
for _ in $(seq 1 50); do pg_isready -h 127.0.0.1 -p "$port" -q && break; sleep 0.1; done
createdb -h "$pg_host" -p "$pg_port" -U postgres "$db"
echo "PgBouncer $(pgbouncer --version | head -1 | awk '{print $2}') on 127.0.0.1:$port, pool_mode = transaction, in front of $pg_host:$pg_port"
TEST_DATABASE_URL="postgres://postgres@127.0.0.1:$port/$db" \
  TEST_DATABASE_ADMIN_URL="postgres://postgres@$pg_host:$pg_port/$db" \
  DATABASE_POOLER=transaction \
  npm test -- "$@"
