#!/usr/bin/env bash
# Installs what the deploy/test suite needs beyond Go, from Debian's packages:
#   prometheus      the Prometheus 2.42 server (end-to-end test) and promtool (config, rules, rule tests)
#   docker-compose  compose v1, to validate docker-compose.yml without a Docker engine
# Idempotent: it runs apt-get only when a tool is missing, and fails loudly when it cannot.
# --no-install-recommends matters: docker-compose otherwise pulls in a whole container runtime,
# and prometheus the node exporter.
set -euo pipefail

missing=()
command -v prometheus >/dev/null 2>&1 || missing+=(prometheus)
command -v promtool >/dev/null 2>&1 || missing+=(prometheus)
command -v docker-compose >/dev/null 2>&1 || missing+=(docker-compose)

if [ "${#missing[@]}" -eq 0 ]; then
	echo "deploy/test deps: prometheus, promtool and docker-compose are installed"
	exit 0
fi

# Unique package names, in order.
packages=$(printf '%s\n' "${missing[@]}" | awk '!seen[$0]++' | tr '\n' ' ')

sudo=()
if [ "$(id -u)" -ne 0 ]; then
	if command -v sudo >/dev/null 2>&1; then
		sudo=(sudo)
	else
		echo "deploy/test deps: need root (or sudo) to install: $packages" >&2
		exit 1
	fi
fi
if ! command -v apt-get >/dev/null 2>&1; then
	echo "deploy/test deps: apt-get not found; install these by hand: $packages" >&2
	exit 1
fi

echo "deploy/test deps: installing $packages"
export DEBIAN_FRONTEND=noninteractive
"${sudo[@]}" apt-get update
# shellcheck disable=SC2086 # $packages is a list of words on purpose
"${sudo[@]}" apt-get install -y --no-install-recommends $packages

for tool in prometheus promtool docker-compose; do
	if ! command -v "$tool" >/dev/null 2>&1; then
		echo "deploy/test deps: $tool is still missing after installing $packages" >&2
		exit 1
	fi
done
echo "deploy/test deps: installed $packages"
