// Package test holds the tests of the deployment (deploy/, dashboards/, docker-compose.yml)
// that need heavy tools: the Prometheus module (its PromQL parser), the Prometheus server and
// promtool of the release the stack runs (deps.sh builds them from that module and caches them),
// and docker-compose. It is a module of its own so that none of this reaches the service's
// dependencies.
//
// Run it after `bash deploy/test/deps.sh`: cd deploy/test && go test -race -count=1 ./...
package test
