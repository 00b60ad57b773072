#!/usr/bin/env bash
# Runs tests on another Node.js major than the machine's, the way the Docker image runs the services (Node 22):
#
#   npm run test:node -- 22 [jest arguments]      e.g.  npm run test:node -- 22 libs/sandbox --selectProjects unit int
#
# The isolate's V8 is the host's, so what tool code sees and how its memory is bounded depend on the Node that runs
# the worker; this is how that Node is checked here. Node comes from the npm registry (node-linux-<arch>, the only
# registry this project can count on), unpacked under TOOLHOST_NODE_CACHE (default ~/.cache/toolhost). The tests run in
# a copy of the working tree (tracked and untracked, not ignored) whose node_modules links every package of the
# project's but isolated-vm, which is built for that Node: the project's own version by default, or
# ISOLATED_VM=<version> (6.x ships prebuilt binaries for Node 22 and 24; 5.0.x is compiled, about a minute).
set -euo pipefail

major="${1:?usage: test-on-node.sh <node major> [jest arguments]}"
shift
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cache="${TOOLHOST_NODE_CACHE:-$HOME/.cache/toolhost}"
arch="$(node -p process.arch)"
node_dir="$cache/node-$major"

if [ ! -x "$node_dir/bin/node" ]; then
  mkdir -p "$cache/download"
  tarball="$(cd "$cache/download" && npm pack --silent "node-linux-$arch@$major" | tail -n 1)"
  rm -rf "$node_dir" && mkdir -p "$node_dir"
  tar -xzf "$cache/download/$tarball" -C "$node_dir" --strip-components=1
fi
node_bin="$node_dir/bin/node"
echo "test-on-node: $("$node_bin" --version) from $node_dir"

ivm_version="${ISOLATED_VM:-$(node -p "require('$root/node_modules/isolated-vm/package.json').version")}"
ivm_dir="$cache/isolated-vm-$ivm_version-node-$major"
if [ ! -f "$ivm_dir/.built" ]; then
  rm -rf "$ivm_dir" && mkdir -p "$ivm_dir"
  (cd "$ivm_dir" && echo '{"private":true}' > package.json &&
    npm install --silent --no-audit --no-fund --ignore-scripts "isolated-vm@$ivm_version")
  # Its install script (node-gyp-build, or node-gyp rebuild), run here with that Node and its headers: npm runs no
  # dependency's install script without approval.
  # npm_config_nodedir (this machine points npm at Node 20's headers) would win over --nodedir.
  if ! (cd "$ivm_dir" && "$node_bin" --no-node-snapshot -e "require('isolated-vm')" 2>/dev/null); then
    gyp="$(dirname "$(dirname "$(readlink -f "$(command -v npm)")")")/node_modules/node-gyp/bin/node-gyp.js"
    (cd "$ivm_dir/node_modules/isolated-vm" &&
      env -u npm_config_nodedir PATH="$node_dir/bin:$PATH" "$node_bin" "$gyp" rebuild --release -j max --nodedir="$node_dir" >/dev/null)
  fi
  touch "$ivm_dir/.built"
fi

tree="$cache/tree-node-$major"
rm -rf "$tree" && mkdir -p "$tree/node_modules"
# A tracked file deleted in the working tree is listed but cannot be copied: the copy goes on without it.
(cd "$root" && git ls-files -z --cached --others --exclude-standard | xargs -0 cp --parents -t "$tree" 2>/dev/null || true)
for entry in "$root"/node_modules/* "$root"/node_modules/.bin; do
  [ "$(basename "$entry")" = isolated-vm ] || ln -s "$entry" "$tree/node_modules/$(basename "$entry")"
done
ln -s "$ivm_dir/node_modules/isolated-vm" "$tree/node_modules/isolated-vm"
echo "test-on-node: isolated-vm $ivm_version, tests in $tree"

cd "$tree"
PATH="$node_dir/bin:$PATH" exec "$node_bin" --no-node-snapshot node_modules/jest/bin/jest.js --maxWorkers=2 "$@"
