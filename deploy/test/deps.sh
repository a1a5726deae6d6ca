#!/usr/bin/env bash
# Installs what the deploy/test suite needs beyond Go:
#   docker-compose  compose v1 from Debian's packages, to validate docker-compose.yml without a
#                   Docker engine (--no-install-recommends: otherwise it pulls a container runtime)
#   prometheus, promtool
#                   the release docker-compose.yml runs (v3.13.1), built from the Go module
#                   github.com/prometheus/prometheus at the version deploy/test/go.mod requires
#                   (module v0.313.1 is release v3.13.1; TestPrometheusVersionsAgree keeps the
#                   two and the compose tag equal). Debian packages only 2.x, which lacks the
#                   native-histogram keys of deploy/prometheus/prometheus.yml.
# The binaries are cached per version in ${XDG_CACHE_HOME:-$HOME/.cache}/mockgateway/ (Go's
# os.UserCacheDir, where the tests look): the first build takes about eight minutes on two cores,
# later runs reuse it. Idempotent; fails loudly when it cannot install or build.
#
# Usage: deps.sh [compose|prometheus] — one of the two, or (no argument) both. make test installs
# docker-compose first and builds Prometheus beside the root module's tests.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"

install_compose() {
	if command -v docker-compose >/dev/null 2>&1; then
		echo "deploy/test deps: docker-compose is installed"
		return
	fi
	local sudo=()
	if [ "$(id -u)" -ne 0 ]; then
		if ! command -v sudo >/dev/null 2>&1; then
			echo "deploy/test deps: need root (or sudo) to install docker-compose" >&2
			exit 1
		fi
		sudo=(sudo)
	fi
	if ! command -v apt-get >/dev/null 2>&1; then
		echo "deploy/test deps: apt-get not found; install docker-compose (v1) by hand" >&2
		exit 1
	fi
	echo "deploy/test deps: installing docker-compose"
	export DEBIAN_FRONTEND=noninteractive
	"${sudo[@]}" apt-get update
	"${sudo[@]}" apt-get install -y --no-install-recommends docker-compose
	command -v docker-compose >/dev/null 2>&1 || {
		echo "deploy/test deps: docker-compose is still missing after apt-get install" >&2
		exit 1
	}
}

# build_prometheus builds prometheus and promtool from the module's own go.mod (its pinned
# dependencies and replace directive), not deploy/test's: `go install …@version` refuses a module
# with a replace directive, and the module zip's go.work names folders the zip lacks, hence
# GOWORK=off. Without the builtinassets tag the web UI is not embedded (its assets are generated
# by npm, not in the module); the HTTP API, which the tests use, does not need them.
build_prometheus() {
	local module version release dir cache src ldflags
	module=github.com/prometheus/prometheus
	version=$(cd "$here" && go list -m -f '{{.Version}}' "$module")
	# v0.MMM.P is release v3.(MMM-300).P.
	if [[ ! $version =~ ^v0\.3([0-9][0-9])\.([0-9]+)$ ]]; then
		echo "deploy/test deps: $module $version is not a v0.3xx.y (Prometheus 3) module version" >&2
		exit 1
	fi
	release="3.$((10#${BASH_REMATCH[1]})).${BASH_REMATCH[2]}"
	cache="${XDG_CACHE_HOME:-$HOME/.cache}"
	dir="$cache/mockgateway/prometheus-v$release"
	if "$dir/prometheus" --version 2>/dev/null | grep -q "version $release " &&
		"$dir/promtool" --version 2>/dev/null | grep -q "version $release "; then
		echo "deploy/test deps: Prometheus v$release is built ($dir)"
		return
	fi
	echo "deploy/test deps: building Prometheus v$release and promtool from source ($module@$version), once: about 8 min on 2 cores; cached in $dir"
	local started=$SECONDS
	src=$(cd "$here" && go mod download -json "$module@$version" | sed -n 's/^[[:space:]]*"Dir": "\(.*\)",$/\1/p')
	if [ -z "$src" ] || [ ! -d "$src/cmd/prometheus" ]; then
		echo "deploy/test deps: go mod download $module@$version gave no source directory" >&2
		exit 1
	fi
	mkdir -p "$dir"
	build_tmp=$(mktemp -d "$dir/.build-XXXXXX")
	local tmp=$build_tmp
	ldflags="-X github.com/prometheus/common/version.Version=$release"
	ldflags+=" -X github.com/prometheus/common/version.Branch=$version"
	ldflags+=" -X github.com/prometheus/common/version.Revision=module-$version"
	(cd "$src" && GOWORK=off GOFLAGS=-mod=readonly CGO_ENABLED=0 \
		go build -trimpath -tags netgo -ldflags "$ldflags" -o "$tmp/" ./cmd/prometheus ./cmd/promtool)
	# Moved into place only once both are built: a killed build leaves no half cache behind.
	mv -f "$tmp/prometheus" "$tmp/promtool" "$dir/"
	rm -rf "$tmp"
	"$dir/prometheus" --version | grep -q "version $release " || {
		echo "deploy/test deps: $dir/prometheus does not report version $release" >&2
		exit 1
	}
	echo "deploy/test deps: built Prometheus v$release in $(((SECONDS - started) / 60))m$(((SECONDS - started) % 60))s ($dir)"
}

# A failed or interrupted build leaves no temporary folder behind.
build_tmp=""
trap '[ -z "$build_tmp" ] || rm -rf "$build_tmp"' EXIT

case "${1:-}" in
"") install_compose; build_prometheus ;;
compose) install_compose ;;
prometheus) build_prometheus ;;
*)
	echo "usage: deploy/test/deps.sh [compose|prometheus]" >&2
	exit 2
	;;
esac
