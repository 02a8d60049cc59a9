// Package cli is fedscope's command line (DESIGN.md, "Command line"): the
// root flags that open the explorer, and the headless subcommands presets,
// run and sweep with their CSV / JSON-lines output and exit statuses.
package cli

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"os"
	"strings"
	"text/tabwriter"

	"github.com/fedscope/fedscope/experiment"
	"github.com/fedscope/fedscope/experiment/registry"
	"github.com/fedscope/fedscope/tui"
	"github.com/mattn/go-isatty"
)

// Exit statuses of the command line (DESIGN.md, "Command line").
const (
	ExitOK      = 0
	ExitFailure = 1 // the run failed or a racer diverged; rows written so far are kept
	ExitUsage   = 2 // bad input: unknown key, malformed or out-of-range value

	// ExitInterrupted follows the shell convention 128 + SIGINT.
	ExitInterrupted = 130
)

// Main runs fedscope with the arguments after the program name and returns
// the exit status: a headless subcommand, or the explorer.
func Main(ctx context.Context, args []string, version string, stdout, stderr io.Writer) int {
	app := &app{catalog: registry.Catalog(), engine: experiment.NewEngine(), stdout: stdout, stderr: stderr}
	if len(args) > 0 {
		switch args[0] {
		case "--version", "-version", "version":
			fmt.Fprintln(stdout, "fedscope", version)
			return ExitOK
		case "presets", "run", "sweep", "merge":
			return app.report(app.command(ctx, args))
		}
	}
	return app.explore(ctx, args)
}

// app is one invocation: the families, the engine and the output streams.
type app struct {
	catalog        *experiment.Catalog
	engine         *experiment.Engine
	stdout, stderr io.Writer
}

// explore parses the root flags (--preset, --seed, --rounds, --set) and opens
// the explorer.
func (a *app) explore(ctx context.Context, args []string) int {
	fs := newFlagSet("fedscope")
	var sf scenarioFlags
	sf.register(fs)
	if err := parseFlags(fs, args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			fmt.Fprintln(a.stdout, usage)
			return ExitOK
		}
		return a.report(err)
	}
	sc, err := sf.scenario(a.catalog)
	if err != nil {
		return a.report(err)
	}
	if f, ok := a.stdout.(*os.File); !ok || !isatty.IsTerminal(f.Fd()) {
		cmd := "run"
		if sc.IsSweep() {
			cmd = "sweep"
		}
		fmt.Fprintf(a.stderr, "fedscope: standard output is not a terminal; for headless output run\n"+
			"  fedscope %s --preset %s --format csv\n", cmd, sc.Preset)
		return ExitUsage
	}
	if err := tui.Run(ctx, a.catalog, a.engine, sc, a.stdout); err != nil {
		fmt.Fprintf(a.stderr, "fedscope: %v\n", err)
		return ExitFailure
	}
	return ExitOK
}

// command runs a headless subcommand.
func (a *app) command(ctx context.Context, args []string) error {
	switch args[0] {
	case "presets":
		return a.listPresets(args[1:])
	case "run":
		return a.run(ctx, args[1:])
	case "sweep":
		return a.sweep(ctx, args[1:])
	case "merge":
		return a.merge(args[1:])
	}
	return experiment.Errorf("unknown command %q; commands: presets, run, sweep, merge", args[0])
}

// errInterrupted reports a headless run stopped by Ctrl-C or SIGTERM.
type errInterrupted struct{ rows int }

func (e errInterrupted) Error() string {
	return fmt.Sprintf("interrupted; wrote the %d rows computed so far", e.rows)
}

// report writes err as one line (several racers' divergences, joined by
// errors.Join with newlines, are separated by "; ") and returns the exit
// status.
func (a *app) report(err error) int {
	var ie *experiment.InputError
	switch {
	case err == nil:
		return ExitOK
	case errors.As(err, new(errInterrupted)):
		fmt.Fprintf(a.stderr, "fedscope: %s\n", oneLine(err))
		return ExitInterrupted
	case errors.Is(err, flag.ErrHelp):
		fmt.Fprintln(a.stderr, usage)
		return ExitOK
	case errors.As(err, &ie):
		fmt.Fprintf(a.stderr, "fedscope: %s\n", oneLine(err))
		return ExitUsage
	default:
		fmt.Fprintf(a.stderr, "fedscope: %s\n", oneLine(err))
		return ExitFailure
	}
}

func oneLine(err error) string { return strings.ReplaceAll(err.Error(), "\n", "; ") }

const usage = `usage:
  fedscope [--preset NAME] [--seed S] [--set key=value]...   open the explorer
  fedscope presets                                           list the presets
  fedscope run --preset NAME [--rounds N] [--seed S] [--set key=value]... [--format csv|jsonl] [--out PATH]
  fedscope sweep --preset NAME [--trials N] [--seed S] [--set key=value]... [--format csv|jsonl] [--out PATH] [--shard i/n]
  fedscope merge [--format csv|jsonl] [--out PATH] SHARD-FILES...            combine the shards of a sweep
  fedscope --version`

func (a *app) listPresets(args []string) error {
	if err := parseFlags(newFlagSet("presets"), args); err != nil {
		return err
	}
	tw := tabwriter.NewWriter(a.stdout, 0, 0, 2, ' ', 0)
	for _, p := range a.catalog.Presets() {
		fmt.Fprintf(tw, "%s\t%s\n", p.Name, p.Summary)
	}
	return tw.Flush()
}

// run is `fedscope run`: one row per (racer, round). An interrupted run
// still writes every round computed so far: nothing is lost.
func (a *app) run(ctx context.Context, args []string) error {
	fs := newFlagSet("run")
	var sf scenarioFlags
	sf.register(fs)
	format := fs.String("format", "csv", "output format: csv or jsonl")
	out := fs.String("out", "", "write to `path` instead of standard output")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	f, err := experiment.ParseFormat(*format)
	if err != nil {
		return err
	}
	sc, err := sf.scenario(a.catalog)
	if err != nil {
		return err
	}
	if sc.IsSweep() {
		return experiment.Errorf("preset %q is a sweep; run it with: fedscope sweep --preset %s", sc.Preset, sc.Preset)
	}
	table := experiment.NewTable(sc)
	var warnings []string
	seen := map[string]bool{}
	res, err := a.engine.Run(ctx, sc, experiment.Observer{Round: func(p experiment.Point) {
		if w := p.Round.Warning; w != "" && !seen[w] {
			seen[w] = true
			warnings = append(warnings, fmt.Sprintf("%s, round %d: %s", table.Labels[p.Racer], p.Round.Index, w))
		}
		table.Add(p)
	}})
	interrupted := errors.Is(err, context.Canceled)
	if err != nil && !interrupted {
		return err
	}
	if res.Racers != nil {
		a.describe(res.Facts, warnings)
		if f == experiment.JSONL {
			table.Header = experiment.NewHeader(sc, res.Facts)
		}
	}
	if err := writeOut(*out, a.stdout, func(w io.Writer) error { return table.Write(w, f) }); err != nil {
		return err
	}
	if interrupted {
		return errInterrupted{rows: table.Len()}
	}
	if failed := res.Failed(); len(failed) > 0 {
		return errors.Join(failed...)
	}
	return nil
}

// describe writes to stderr how the data were prepared (the parameters and
// how each was chosen), the family's notes and every warning: a run outside
// the regime its paper covers is never silent.
func (a *app) describe(f experiment.Facts, warnings []string) {
	if len(f.Params) > 0 {
		parts := make([]string, len(f.Params))
		for i, p := range f.Params {
			parts[i] = fmt.Sprintf("%s=%s (%s)", p.Name, experiment.FormatFloat(p.Value), p.How)
		}
		fmt.Fprintf(a.stderr, "fedscope: %s\n", strings.Join(parts, ", "))
	}
	for _, n := range f.Notes {
		fmt.Fprintf(a.stderr, "fedscope: note: %s\n", n)
	}
	for _, w := range append(f.Warnings, warnings...) {
		fmt.Fprintf(a.stderr, "fedscope: warning: %s\n", w)
	}
}

// sweep is `fedscope sweep`: one row per (racer, swept value) with the mean
// and standard deviation of each metric over the trials. An interrupted
// sweep writes the rows of every swept value with at least one trial done
// (its trials column says how many).
func (a *app) sweep(ctx context.Context, args []string) error {
	fs := newFlagSet("sweep")
	var sf scenarioFlags
	sf.register(fs)
	trials := fs.Int("trials", 0, "trials per swept value (default: the preset's)")
	format := fs.String("format", "csv", "output format: csv or jsonl")
	out := fs.String("out", "", "write to `path` instead of standard output")
	shard := fs.String("shard", "", "compute only shard `i/n` (0 ≤ i < n) of the (value, trial) grid, as JSON lines for fedscope merge")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	f, err := experiment.ParseFormat(*format)
	if err != nil {
		return err
	}
	if !sf.given("preset") {
		return experiment.Errorf("sweep: --preset is required; sweep presets: %s", strings.Join(a.catalog.SweepPresetNames(), ", "))
	}
	sc, err := sf.scenario(a.catalog)
	if err != nil {
		return err
	}
	if !sc.IsSweep() {
		return experiment.Errorf("preset %q is not a sweep; sweep presets: %s", sc.Preset, strings.Join(a.catalog.SweepPresetNames(), ", "))
	}
	if *trials != 0 || sf.given("trials") {
		if *trials < 1 || *trials > experiment.MaxTrials {
			return experiment.Errorf("--trials %d: must lie in 1..%d", *trials, experiment.MaxTrials)
		}
		sc.Trials = *trials
	}
	if *shard != "" || sf.given("shard") {
		return a.sweepShard(ctx, sc, &sf, *trials, *shard, sf.given("format"), *format, *out)
	}
	table, err := experiment.NewSweepTable(sc)
	if err != nil {
		return err
	}
	err = experiment.RunSweep(ctx, sc, table.Add)
	interrupted := errors.Is(err, context.Canceled)
	// Like run: whatever was computed is written, on interrupt or failure.
	if werr := writeOut(*out, a.stdout, func(w io.Writer) error { return table.Write(w, f) }); werr != nil {
		return werr
	}
	if interrupted {
		return errInterrupted{rows: table.Rows()}
	}
	return err
}

// writeOut writes to path, or to stdout when path is empty. A file is written
// completely or not replaced, so an existing file is never half-overwritten.
func writeOut(path string, stdout io.Writer, write func(io.Writer) error) error {
	if path == "" {
		return write(stdout)
	}
	tmp, err := os.CreateTemp(dirOf(path), ".fedscope-*")
	if err != nil {
		var pe *fs.PathError
		if errors.As(err, &pe) {
			err = pe.Err // the temporary name would only confuse
		}
		return fmt.Errorf("--out %s: cannot create the file: %w", path, err)
	}
	defer os.Remove(tmp.Name())
	if err := write(tmp); err != nil {
		tmp.Close()
		return fmt.Errorf("--out %s: %w", path, err)
	}
	if err := tmp.Chmod(0o644); err != nil {
		tmp.Close()
		return fmt.Errorf("--out %s: %w", path, err)
	}
	if err := tmp.Close(); err != nil {
		return fmt.Errorf("--out %s: %w", path, err)
	}
	if err := os.Rename(tmp.Name(), path); err != nil {
		return fmt.Errorf("--out %s: %w", path, err)
	}
	return nil
}

func dirOf(path string) string {
	if i := strings.LastIndexAny(path, `/\`); i >= 0 {
		return path[:i+1]
	}
	return "."
}
