// Command periscope-bench holds Periscope's benchmarks: the load clients,
// the synthetic datasets they run over (internal/hostgen, internal/vulngen)
// and a local Certificate Transparency log (internal/ct/cttest). They live
// outside the periscope binary, which ships none of them.
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
	err := run(ctx, os.Args[1:], os.Getenv, os.Stdout, os.Stderr)
	stop()
	if err != nil {
		fmt.Fprintln(os.Stderr, "periscope-bench:", err)
		os.Exit(1)
	}
}
