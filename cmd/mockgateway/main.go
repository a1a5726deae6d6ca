// Command mockgateway is a local mock of an LLM gateway speaking a subset of the OpenAI Chat
// Completions protocol. main only wires the process to run; everything is built there.
package main

import (
	"context"
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
		os.Exit(1)
	}
}
