// Command mockgateway is a local mock of an LLM gateway: OpenAI's Chat Completions and Responses
// API and Anthropic's Messages, with simulated latency, faults and gateway policies, fixtures and
// full telemetry. main only wires the process to run; everything is built there.
package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/signal"
	"syscall"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, os.Args[1:], os.Getenv, os.Stdout, os.Stderr); err != nil {
		fmt.Fprintf(os.Stderr, "mockgateway: %v\n", err)
		// The audit's verdict is its exit status: 1 a leak, 2 it could not run.
		var coded interface{ ExitCode() int }
		if errors.As(err, &coded) {
			os.Exit(coded.ExitCode())
		}
		os.Exit(1)
	}
}
