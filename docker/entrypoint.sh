#!/bin/sh
# Starts the service named by the first argument. exec: the service is PID 1's only child-free process and gets
# SIGTERM itself. The flags are SERVICE_NODE_FLAGS (libs/config/src/node-flags.ts): --no-node-snapshot, as isolated-vm
# cannot load in a process started from Node's snapshot; a 32 MB young generation, for fewer scavenges under load; no
# allocation-site pretenuring, whose dead old objects kept young ones alive through scavenges; scavenges on the main
# thread alone, as helper threads waiting for a busy core made them no shorter and twice as dear.
set -eu
service="${1:-gateway}"
case "$service" in
  registry | gateway | worker) exec node --no-node-snapshot --max-semi-space-size=32 --no-allocation-site-pretenuring --no-parallel-scavenge "/app/dist/services/$service/src/main.js" ;;
  *) echo "usage: registry | gateway | worker (got '$service')" >&2; exit 64 ;;
esac
