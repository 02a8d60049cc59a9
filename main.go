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
	"runtime"
	"runtime/debug"
	"syscall"

	"github.com/fedscope/fedscope/cli"
)

// Set by the release build through -ldflags "-X main.version=…".
var version, commit, date string

func main() {
	lateFirstGC()
	// main is the one owner of SIGINT, SIGTERM and SIGHUP (cli.Interrupt):
	// the explorer runs without Bubble Tea's signal handler.
	sigs := make(chan os.Signal, 2)
	signal.Notify(sigs, os.Interrupt, syscall.SIGTERM, syscall.SIGHUP)
	ctx, cancel := context.WithCancelCause(context.Background())
	go cli.Interrupt(sigs, cancel, func(s string) { fmt.Fprint(os.Stderr, s) }, os.Exit)
	os.Exit(cli.Main(ctx, os.Args[1:], versionString(), os.Stdout, os.Stderr))
}

// lateFirstGC lets the heap grow to about 40 MB (GOGC = 1000 over the
// runtime's 4 MB minimum) before the first collection, then restores
// GOGC = 100 once that collection has run. A small run (a fresh `paradox`
// allocates about 24 MB) then needs no collection at all — each one had
// stopped both cores for about 4 ms — while a large run is collected as
// before from its first 40 MB on. A GOGC set in the environment is left
// alone.
func lateFirstGC() {
	if os.Getenv("GOGC") != "" {
		return
	}
	debug.SetGCPercent(1000)
	runtime.SetFinalizer(new(gcSentinel), func(*gcSentinel) { debug.SetGCPercent(100) })
}

// gcSentinel is unreachable from the start; its finalizer runs after the
// first collection.
type gcSentinel struct{ _ [64]byte }

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
