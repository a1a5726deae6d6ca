// Package traffic owns the traffic generator (mockgateway traffic): gentle, steady client
// traffic over every path of the service so that dashboards are alive on first start.
package traffic

import (
	"context"
	"errors"
	"io"
)

// Run is the traffic subcommand.
func Run(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	return errors.New("traffic: not built yet")
}
