// Package audit owns the redaction audit (mockgateway audit): canary traffic through every
// client path of a running service, then a search of every telemetry source for the canaries.
package audit

import (
	"context"
	"errors"
	"io"
)

// Run is the audit subcommand.
func Run(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	return errors.New("audit: not built yet")
}
