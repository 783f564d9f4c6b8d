#!/bin/sh
# A production install of the server in TARGET, made from this source tree (docs/deployment.md):
#
#   npm ci                                  # once, in the source tree: the build needs esbuild
#   sh scripts/build-production.sh TARGET
#   cd TARGET && node --enable-source-maps dist/main.js
#
# 1. build: dist/main.js from src/ (scripts/build.mjs; it fails if the server imports a package
#    that is not in `dependencies`);
# 2. install: package.json and package-lock.json beside it, `npm ci --omit=dev`: the locked
#    runtime dependencies only, no TypeScript, tsx or esbuild.
# TARGET then holds dist/, node_modules/, package.json, package-lock.json and scripts/start.mjs
# (`npm start` there runs dist/ as it is). The source tree is only read. The Dockerfile's build
# stage and CI (scripts/check-production.sh) run this script.
set -eu

if [ $# -ne 1 ] || [ -z "$1" ]; then
  echo "usage: sh scripts/build-production.sh TARGET" >&2
  exit 64
fi
root=$(cd "$(dirname "$0")/.." && pwd)
mkdir -p "$1"
target=$(cd "$1" && pwd)
case "$target/" in
  "$root/") echo "build-production: TARGET must not be the source tree" >&2; exit 64 ;;
esac
if [ ! -d "$root/node_modules/esbuild" ]; then
  echo "build-production: run npm ci in $root first (the build needs its dev dependencies)" >&2
  exit 1
fi

echo "build-production: building $target/dist"
rm -rf "$target/dist" "$target/node_modules"
node "$root/scripts/build.mjs" --outdir "$target/dist"

echo "build-production: installing the runtime dependencies (npm ci --omit=dev)"
cp "$root/package.json" "$root/package-lock.json" "$target/"
mkdir -p "$target/scripts"
cp "$root/scripts/start.mjs" "$target/scripts/"
(cd "$target" && npm ci --omit=dev --no-audit --no-fund)

echo "build-production: done: cd $target && node --enable-source-maps dist/main.js"
