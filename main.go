// Command fedscope is a terminal explorer for the dynamics of federated
// learning: it races FedAvg, FedProx and friends on synthetic federations and
// streams their gradient norms and estimation errors into live charts, or
// prints them as CSV / JSON lines for scripts.
package main

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"runtime/debug"
	"syscall"

	"github.com/fedscope/fedscope/internal/cli"
)

// Set by the release build through -ldflags "-X main.version=…".
var version, commit, date string

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	os.Exit(cli.Main(ctx, os.Args[1:], versionString(), os.Stdout, os.Stderr))
}

func versionString() string {
	if version == "" {
		version = "devel"
		if bi, ok := debug.ReadBuildInfo(); ok && bi.Main.Version != "" && bi.Main.Version != "(devel)" {
			version = bi.Main.Version
		}
	}
	if commit != "" && date != "" {
		return fmt.Sprintf("%s (commit %s, built %s)", version, commit, date)
	}
	return version
}
