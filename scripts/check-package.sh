#!/usr/bin/env bash
# Proves that a workspace package works as its users will get it (issue 36):
#   1. builds it (scripts/build-package.mjs), checks its sources have no import cycle
#      (scripts/package-cycles.cjs) and lints what would be published: publint (strict,
#      nothing reported) and @arethetypeswrong/cli on the packed tarball (types for import and
#      require under node10, node16 and bundler resolution);
#   2. packs it (npm pack) and installs the tarball in a scratch project outside the repository
#      (mktemp -d), with no workspace link to fall back on;
#   3. starts a test server (embedded database, memory://; free ports; the demo merchant's
#      credentials from DATA_DIR/demo-credentials.json) and runs the package's own programs,
#      <package dir>/pack-check/*.mjs (import) and *.cjs (require), in the scratch project with
#      MW_BASE_URL, MW_CONNECT_HOST, MW_CLIENT_ID, MW_API_KEY and MW_SIGNING_KEY set.
#
# Usage: scripts/check-package.sh <package dir> [<workspace package dir it depends on> ...]
#   e.g. scripts/check-package.sh packages/sdk
#        scripts/check-package.sh packages/cli packages/sdk   (the SDK's tarball is installed too)
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
[ $# -ge 1 ] || { echo "usage: $0 <package dir> [<dependency package dir> ...]" >&2; exit 2; }
pkg_dir="$(cd "$1" && pwd)"
shift
deps=()
for d in "$@"; do deps+=("$(cd "$d" && pwd)"); done
name="$(node -p "require('$pkg_dir/package.json').name")"
say() { echo "-- check-package $name: $*"; }

work="$(mktemp -d)"
server_pid=""
cleanup() {
  if [ -n "$server_pid" ] && kill -0 "$server_pid" 2>/dev/null; then
    kill -TERM "$server_pid" 2>/dev/null || true
    for _ in $(seq 1 50); do kill -0 "$server_pid" 2>/dev/null || break; sleep 0.1; done
    kill -KILL "$server_pid" 2>/dev/null || true
  fi
  rm -rf "$work"
}
trap cleanup EXIT

cd "$root"
bin="$root/node_modules/.bin"
for d in "${deps[@]}" "$pkg_dir"; do
  say "build $(basename "$d")"
  node scripts/build-package.mjs "$d"
done

# npm pack runs the package's prepack (the same build); its last output line is the file name.
pack() { (cd "$1" && npm pack --silent --pack-destination "$work" | tail -n 1); }
tarball="$work/$(pack "$pkg_dir")"
dep_tarballs=()
for d in "${deps[@]}"; do dep_tarballs+=("$work/$(pack "$d")"); done
say "packed $(basename "$tarball"): $(tar -tzf "$tarball" | wc -l) files"

say "no import cycle in its sources"
"$bin/depcruise" "$pkg_dir/src" --config scripts/package-cycles.cjs

say publint
out="$("$bin/publint" run --strict --level suggestion "$tarball" 2>&1)" || { echo "$out"; exit 1; }
echo "$out"
grep -q 'All good!' <<<"$out" || { echo "publint reported something (above)" >&2; exit 1; }

say "attw (are the types wrong?)"
"$bin/attw" --format ascii "$tarball"

say "install the tarball in a scratch project ($work/app)"
mkdir "$work/app"
cp "$pkg_dir"/pack-check/*.mjs "$pkg_dir"/pack-check/*.cjs "$work/app/" 2>/dev/null || true
(cd "$work/app" && npm init -y >/dev/null && npm install --no-audit --no-fund --prefer-offline "${dep_tarballs[@]}" "$tarball" >/dev/null)
[ -L "$work/app/node_modules/$name" ] && { echo "$name is a link, not an install" >&2; exit 1; }

free_port() { node -e "const s=require('node:net').createServer().listen(0,'127.0.0.1',()=>{console.log(s.address().port);s.close()})"; }
port="$(free_port)"
admin_port="$(free_port)"
while [ "$admin_port" = "$port" ]; do admin_port="$(free_port)"; done
say "start a test server on $port (admin $admin_port, memory://)"
# The sources through tsx (the production build is not needed to test a client package).
PORT="$port" ADMIN_PORT="$admin_port" HOST=127.0.0.1 ADMIN_HOST=127.0.0.1 DATA_DIR="$work/data" DATABASE_URL=memory:// LOG_LEVEL=warn \
  node --import tsx src/main.ts >"$work/server.log" 2>&1 &
server_pid=$!
for _ in $(seq 1 240); do
  if [ -s "$work/data/demo-credentials.json" ] && curl -fsS -o /dev/null "http://127.0.0.1:$port/readyz" 2>/dev/null; then break; fi
  kill -0 "$server_pid" 2>/dev/null || { cat "$work/server.log"; echo "the server exited" >&2; exit 1; }
  sleep 0.25
done
curl -fsS -o /dev/null "http://127.0.0.1:$port/readyz" || { cat "$work/server.log"; echo "the server did not become ready in 60 s" >&2; exit 1; }
cred() { node -p "require('$work/data/demo-credentials.json').$1"; }

ran=0
for program in "$work/app"/*.mjs "$work/app"/*.cjs; do
  [ -e "$program" ] || continue
  say "run $(basename "$program")"
  (cd "$work/app" && MW_BASE_URL="http://api-sandbox.localhost:$port" MW_CONNECT_HOST=127.0.0.1 \
    MW_CLIENT_ID="$(cred client_id)" MW_API_KEY="$(cred api_key)" MW_SIGNING_KEY="$(cred signing_key)" \
    node "$(basename "$program")") || { echo "--- server log"; tail -n 50 "$work/server.log"; exit 1; }
  ran=$((ran + 1))
done
[ "$ran" -gt 0 ] || { echo "no program in $pkg_dir/pack-check" >&2; exit 1; }
say "ok"
