package cli

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"strings"

	"github.com/fedscope/fedscope/experiment"
	"github.com/fedscope/fedscope/experiment/registry"
)

// setFlags collects repeated --set key=value flags.
type setFlags []string

func (s *setFlags) String() string     { return strings.Join(*s, " ") }
func (s *setFlags) Set(v string) error { *s = append(*s, v); return nil }

// scenarioFlags are the flags that choose a scenario, shared by the explorer
// and the headless commands.
type scenarioFlags struct {
	preset string
	// --rounds and --seed are read as text and parsed by the reader of
	// --set values (experiment.ParseWhole, ParseSeed), not by the flag
	// package, which would take 010 for octal and accept 0x10 or 1_0.
	rounds, seed string
	sets         setFlags
	fs           *flag.FlagSet // tells an explicit --rounds "" from the default

	// The values of --rounds and --seed once scenario has read them.
	roundsN int
	seedN   uint64
}

// register adds --preset, --rounds, --seed and --set to a flag set.
func (f *scenarioFlags) register(fs *flag.FlagSet) {
	fs.StringVar(&f.preset, "preset", registry.DefaultPreset, "preset (fedscope presets lists them)")
	fs.StringVar(&f.rounds, "rounds", "", "communication rounds (default: the preset's)")
	fs.StringVar(&f.seed, "seed", "", "master seed of every random draw (default: the preset's)")
	fs.Var(&f.sets, "set", "a scenario parameter (repeatable; fedscope help PRESET lists the keys)")
	f.fs = fs
}

// given reports whether the flag was set on the command line.
func (f *scenarioFlags) given(name string) bool {
	found := false
	if f.fs != nil {
		f.fs.Visit(func(fl *flag.Flag) { found = found || fl.Name == name })
	}
	return found
}

// scenario builds the validated scenario the flags describe: the preset, the
// assignments that switch the family (data=) or the swept knob (sweep=),
// then --rounds and --seed, then the other assignments.
func (f *scenarioFlags) scenario(cat *experiment.Catalog) (experiment.Scenario, error) {
	p, err := cat.Lookup(f.preset)
	if err != nil {
		return experiment.Scenario{}, err
	}
	sc, rest, err := cat.ApplyEarly(p.Scenario(), f.sets)
	if err != nil {
		return experiment.Scenario{}, err
	}
	if f.given("rounds") {
		n, err := experiment.ParseWhole(strings.TrimSpace(f.rounds), 1, experiment.MaxRounds)
		if err != nil {
			return experiment.Scenario{}, experiment.Errorf("--rounds %q: %v", f.rounds, err)
		}
		sc.Rounds, f.roundsN = n, n
	}
	if f.given("seed") {
		n, err := experiment.ParseSeed(strings.TrimSpace(f.seed))
		if err != nil {
			return experiment.Scenario{}, experiment.Errorf("--seed %q: %v", f.seed, err)
		}
		sc.Seed, f.seedN = n, n
	}
	return cat.Apply(sc, rest)
}

// inert names what --set set that changes nothing in sc (sentences for a
// warning).
func (f *scenarioFlags) inert(sc experiment.Scenario) []string {
	keys := make([]string, len(f.sets))
	for i, s := range f.sets {
		key, _, _ := strings.Cut(s, "=")
		keys[i] = strings.TrimSpace(key)
	}
	return sc.InertSettings(keys)
}

// newFlagSet returns a flag set that reports errors as InputErrors instead of
// printing usage and exiting.
func newFlagSet(name string) *flag.FlagSet {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	return fs
}

// parseFlags parses args, turning flag errors and stray arguments into
// one-line InputErrors.
func parseFlags(fs *flag.FlagSet, args []string) error {
	if err := parseWithArgs(fs, args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return experiment.Errorf("unexpected argument %q", fs.Arg(0))
	}
	return nil
}

// parseWithArgs is parseFlags for a command that takes arguments after its
// flags (merge's shard files): -h and --help are a helpRequest.
func parseWithArgs(fs *flag.FlagSet, args []string) error {
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return helpRequest{cmd: fs.Name(), fs: fs}
		}
		return &experiment.InputError{Msg: flagError(fs, err)}
	}
	return nil
}

// flagError rewrites the flag package's message in fedscope's words, with
// the flag's double dash and a suggestion for a mistyped name.
func flagError(fs *flag.FlagSet, err error) string {
	msg := err.Error()
	// invalid value "abc" for flag -rounds: parse error
	var value, flagName string
	if _, e := fmt.Sscanf(msg, "invalid value %q for flag -%s", &value, &flagName); e == nil {
		flagName = strings.TrimSuffix(flagName, ":")
		what := "not a whole number"
		if strings.Contains(msg, "value out of range") {
			what = "out of range"
		}
		return fmt.Sprintf("--%s %q: %s", flagName, value, what)
	}
	name, ok := strings.CutPrefix(msg, "flag provided but not defined: -")
	if !ok {
		return strings.Replace(msg, ": -", ": --", 1)
	}
	var names []string
	fs.VisitAll(func(f *flag.Flag) { names = append(names, f.Name) })
	where := fs.Name()
	if where != "fedscope" {
		where = "fedscope " + where
	}
	return fmt.Sprintf("unknown flag --%s%s; %s takes: --%s (%s --help explains them)",
		name, experiment.DidYouMean(name, names), where, strings.Join(names, ", --"), where)
}
