// Command loadtest measures mockgateway against the performance targets. It is what
// `make bench` and `make soak` run; besides the standard library it uses only the repository's
// chat client (internal/chatclient) and expfmt, through internal/promtext, to read /metrics.
//
//	go run ./cmd/loadtest [bench] [flags]   Go benchmarks, wrk load runs next to a bare baseline,
//	                                        RSS with 10,000 open streams; one Markdown table
//	go run ./cmd/loadtest scaling [flags]   only bench's scaling table: server CPU per request as
//	                                        the prompt, output tokens, n, tools and fixtures grow
//	go run ./cmd/loadtest soak [flags]      mixed traffic for a duration, sampled over time
//	go run ./cmd/loadtest hostile [-run RE] the hostile requests docs/performance.md measures, each on a
//	                                        fresh server: CPU, peak RSS and the answer
//
// Both build cmd/mockgateway and cmd/baseline into a temporary directory and start them on free
// loopback ports; bench's store kinds (json-store, stream-store) also start Debian's
// redis-server there, without persistence, for a mockgateway with --state-store. All load goes
// to 127.0.0.1 and is bounded in count and time.
package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
	"syscall"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := run(ctx, os.Args[1:], os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}

func run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	mode := "bench"
	if len(args) > 0 && !strings.HasPrefix(args[0], "-") {
		mode, args = args[0], args[1:]
	}
	var err error
	switch mode {
	case "bench":
		err = runBench(ctx, args, stdout, stderr)
	case "scaling":
		err = runScalingCmd(ctx, args, stdout, stderr)
	case "soak":
		err = runSoak(ctx, args, stdout, stderr)
	case "hostile":
		err = runHostile(ctx, args, stdout, stderr)
	default:
		fmt.Fprintf(stderr, "loadtest: unknown mode %q (bench, scaling, soak or hostile)\n", mode)
		return 2
	}
	if err != nil {
		fmt.Fprintf(stderr, "loadtest: %v\n", err)
		return 1
	}
	return 0
}
