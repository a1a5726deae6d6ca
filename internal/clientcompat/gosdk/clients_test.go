// Package gosdk runs two widely used third-party Go clients, unmodified, against a running
// mockgateway in their documented patterns: github.com/sashabaranov/go-openai and
// github.com/tmc/langchaingo (llms/openai). It is its own module, so that their dependencies
// stay out of the service's go.mod. cmd/mockgateway's TestGoClients starts the service and runs
// it with MOCKGATEWAY_BASE_URL set; a missing variable fails, never skips.
package gosdk

import (
	"os"
	"strings"
	"testing"
)

// baseURL is the service's /v1 URL.
func baseURL(t *testing.T) string {
	t.Helper()
	u := os.Getenv("MOCKGATEWAY_BASE_URL")
	if !strings.HasSuffix(u, "/v1") {
		t.Fatalf("MOCKGATEWAY_BASE_URL must be the service's /v1 URL, e.g. http://127.0.0.1:8080/v1 (got %q)", u)
	}
	return u
}
