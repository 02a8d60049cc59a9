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

	"github.com/fedscope/fedscope/cli"
)

// Set by the release build through -ldflags "-X main.version=…".
var version, commit, date string

func main() {
	// main is the one owner of SIGINT, SIGTERM and SIGHUP (cli.Interrupt):
	// the explorer runs without Bubble Tea's signal handler.
	sigs := make(chan os.Signal, 2)
	signal.Notify(sigs, os.Interrupt, syscall.SIGTERM, syscall.SIGHUP)
	ctx, cancel := context.WithCancelCause(context.Background())
	go cli.Interrupt(sigs, cancel, func(s string) { fmt.Fprint(os.Stderr, s) }, os.Exit)
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
