// Package test holds the tests of the deployment (deploy/, dashboards/, docker-compose.yml)
// that need heavy tools: the Prometheus module (its PromQL parser, its configuration and rule
// loaders), Debian's Prometheus server and promtool, and docker-compose. It is a module of its
// own so that none of this reaches the service's dependencies.
//
// Run it after `bash deploy/test/deps.sh`: cd deploy/test && go test -race -count=1 ./...
package test
