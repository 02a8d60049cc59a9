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

	"github.com/fedscope/fedscope/experiment"
	"github.com/fedscope/fedscope/tui"
)

// Set by the release build through -ldflags "-X main.version=…".
var version, commit, date string

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	os.Exit(run(ctx, os.Args[1:]))
}

func run(ctx context.Context, args []string) int {
	if len(args) > 0 {
		switch args[0] {
		case "--version", "-version", "version":
			fmt.Println("fedscope", versionString())
			return experiment.ExitOK
		case "presets", "run", "sweep":
			return experiment.Command(ctx, args, os.Stdout, os.Stderr)
		}
	}
	return tui.Main(ctx, args, os.Stdout, os.Stderr)
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
