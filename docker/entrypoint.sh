#!/bin/sh
# Starts the service named by the first argument. exec: the service is PID 1's only child-free process and gets
# SIGTERM itself. --no-node-snapshot: isolated-vm cannot load in a process started from Node's snapshot.
set -eu
service="${1:-gateway}"
case "$service" in
  registry | gateway | worker) exec node --no-node-snapshot "/app/dist/services/$service/src/main.js" ;;
  *) echo "usage: registry | gateway | worker (got '$service')" >&2; exit 64 ;;
esac
