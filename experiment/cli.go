package experiment

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"math"
	"os"
	"strings"
	"text/tabwriter"
)

// Exit statuses of the command line (DESIGN.md, "Command line").
const (
	ExitOK      = 0
	ExitFailure = 1 // the run failed or a racer diverged; rows written so far are kept
	ExitUsage   = 2 // bad input: unknown key, malformed or out-of-range value

	// ExitInterrupted follows the shell convention 128 + SIGINT.
	ExitInterrupted = 130
)

// setFlags collects repeated --set key=value flags.
type setFlags []string

func (s *setFlags) String() string     { return strings.Join(*s, " ") }
func (s *setFlags) Set(v string) error { *s = append(*s, v); return nil }

// ScenarioFlags are the flags that choose a scenario, shared by the TUI and
// the headless commands.
type ScenarioFlags struct {
	preset string
	rounds int
	seed   int64
	sets   setFlags
	fs     *flag.FlagSet // tells an explicit --rounds 0 or --seed -1 from the defaults
}

// Register adds --preset, --rounds, --seed and --set to a flag set.
func (f *ScenarioFlags) Register(fs *flag.FlagSet) {
	fs.StringVar(&f.preset, "preset", DefaultPreset, "preset `name` (see `fedscope presets`)")
	fs.IntVar(&f.rounds, "rounds", 0, "communication rounds (default: the preset's)")
	fs.Int64Var(&f.seed, "seed", -1, "master seed (default: the preset's)")
	fs.Var(&f.sets, "set", "scenario parameter `key=value` (repeatable)")
	f.fs = fs
}

// given reports whether the flag was set on the command line.
func (f *ScenarioFlags) given(name string) bool {
	found := false
	if f.fs != nil {
		f.fs.Visit(func(fl *flag.Flag) { found = found || fl.Name == name })
	}
	return found
}

// Scenario builds the validated scenario the flags describe.
func (f *ScenarioFlags) Scenario() (Scenario, error) {
	p, err := LookupPreset(f.preset)
	if err != nil {
		return Scenario{}, err
	}
	sc := baseFor(p.Scenario(), f.sets)
	if f.rounds != 0 || f.given("rounds") {
		if f.rounds < 1 || f.rounds > maxRounds {
			return Scenario{}, &InputError{Msg: fmt.Sprintf("--rounds %d: must lie in 1..%d", f.rounds, maxRounds)}
		}
		sc.Rounds = f.rounds
	}
	if f.seed != -1 || f.given("seed") {
		if f.seed < 0 {
			return Scenario{}, &InputError{Msg: fmt.Sprintf("--seed %d: must be a whole number ≥ 0", f.seed)}
		}
		sc.Seed = uint64(f.seed)
	}
	if err := sc.SetAll(f.sets); err != nil {
		return Scenario{}, err
	}
	return sc, nil
}

// NewFlagSet returns a flag set that reports errors as InputErrors instead of
// printing usage and exiting.
func NewFlagSet(name string) *flag.FlagSet {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	return fs
}

// ParseFlags parses args, turning flag errors and stray arguments into
// one-line InputErrors.
func ParseFlags(fs *flag.FlagSet, args []string) error {
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return err
		}
		return &InputError{Msg: err.Error()}
	}
	if fs.NArg() > 0 {
		return &InputError{Msg: fmt.Sprintf("unexpected argument %q", fs.Arg(0))}
	}
	return nil
}

// Command runs a headless subcommand (presets, run, sweep) and returns the exit
// status. Errors are written to stderr as one line.
func Command(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		return report(&InputError{Msg: "no command; commands: presets, run, sweep"}, stderr)
	}
	var err error
	switch args[0] {
	case "presets":
		err = listPresets(args[1:], stdout)
	case "run":
		err = runCommand(ctx, args[1:], stdout)
	case "sweep":
		err = sweepCommand(ctx, args[1:], stdout)
	default:
		err = &InputError{Msg: fmt.Sprintf("unknown command %q; commands: presets, run, sweep", args[0])}
	}
	return report(err, stderr)
}

// report writes err as one line: several racers' divergences, joined by
// errors.Join with newlines, are separated by "; " instead.
// errInterrupted reports a headless run stopped by Ctrl-C or SIGTERM.
type errInterrupted struct{ rows int }

func (e errInterrupted) Error() string {
	return fmt.Sprintf("interrupted; wrote the %d rows computed so far", e.rows)
}

func report(err error, stderr io.Writer) int {
	var ie *InputError
	switch {
	case err == nil:
		return ExitOK
	case errors.As(err, new(errInterrupted)):
		fmt.Fprintf(stderr, "fedscope: %s\n", oneLine(err))
		return ExitInterrupted
	case errors.Is(err, flag.ErrHelp):
		fmt.Fprintln(stderr, usage)
		return ExitOK
	case errors.As(err, &ie):
		fmt.Fprintf(stderr, "fedscope: %s\n", oneLine(err))
		return ExitUsage
	default:
		fmt.Fprintf(stderr, "fedscope: %s\n", oneLine(err))
		return ExitFailure
	}
}

func oneLine(err error) string { return strings.ReplaceAll(err.Error(), "\n", "; ") }

const usage = `usage:
  fedscope [--preset NAME] [--seed S] [--set key=value]...   open the explorer
  fedscope presets                                           list the presets
  fedscope run --preset NAME [--rounds N] [--seed S] [--set key=value]... [--format csv|jsonl] [--out PATH]
  fedscope sweep --preset NAME [--trials N] [--seed S] [--set key=value]... [--format csv|jsonl] [--out PATH]
  fedscope --version`

// Usage is the command-line synopsis.
func Usage() string { return usage }

func listPresets(args []string, stdout io.Writer) error {
	if err := ParseFlags(NewFlagSet("presets"), args); err != nil {
		return err
	}
	tw := tabwriter.NewWriter(stdout, 0, 0, 2, ' ', 0)
	for _, p := range presets {
		fmt.Fprintf(tw, "%s\t%s\n", p.Name, p.Summary)
	}
	return tw.Flush()
}

func runCommand(ctx context.Context, args []string, stdout io.Writer) error {
	fs := NewFlagSet("run")
	var sf ScenarioFlags
	sf.Register(fs)
	format := fs.String("format", "csv", "output format: csv or jsonl")
	out := fs.String("out", "", "write to `path` instead of standard output")
	if err := ParseFlags(fs, args); err != nil {
		return err
	}
	f, err := ParseFormat(*format)
	if err != nil {
		return err
	}
	sc, err := sf.Scenario()
	if err != nil {
		return err
	}
	table := NewTable(sc, math.NaN())
	res, err := Run(ctx, sc, table.Add)
	interrupted := errors.Is(err, context.Canceled)
	if err != nil && !interrupted {
		return err
	}
	if res.Problem != nil {
		table.LSError = res.Problem.LSError
	}
	// An interrupted run still writes every round computed so far: nothing
	// is lost.
	if err := writeOut(*out, stdout, func(w io.Writer) error { return table.Write(w, f) }); err != nil {
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
