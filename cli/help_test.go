package cli

import (
	"flag"
	"strings"
	"testing"

	"github.com/fedscope/fedscope/experiment/registry"
	"github.com/fedscope/fedscope/tui"
)

// TestTypoSuggestions: a table of typos on the command line, each refused
// as bad input (exit 2, one line) with the right guess in the message.
func TestTypoSuggestions(t *testing.T) {
	for _, test := range []struct {
		args []string
		want string
	}{
		{[]string{"rnu"}, `unknown command "rnu" (did you mean "run"?)`},
		{[]string{"swep", "--preset", "polynomial"}, `(did you mean "sweep"?)`},
		{[]string{"hlep"}, `(did you mean "help"?)`},
		{[]string{"run", "--prest", "paradox"}, `unknown flag --prest (did you mean "preset"?)`},
		{[]string{"run", "--round", "3"}, `(did you mean "rounds"?)`},
		{[]string{"sweep", "--preset", "polynomial", "--trial", "3"}, `(did you mean "trials"?)`},
		{[]string{"--preset", "paradx"}, `unknown preset "paradx" (did you mean "paradox"?)`},
		{[]string{"run", "--preset", "mixtrue"}, `(did you mean "mixture"?)`},
		{[]string{"run", "--set", "etta=0.1"}, `unknown key "etta" (value "0.1") (did you mean "eta"?)`},
		{[]string{"run", "--set", "clinets=5"}, `(did you mean "clients"?)`},
		{[]string{"run", "--set", "eta=0,1"}, `eta="0,1": not a number (did you mean 0.1?)`},
		{[]string{"run", "--set", "clients=1,000"}, `not a whole number (did you mean 1000?)`},
		{[]string{"run", "--set", "algorithms=fedavgg"}, `unknown algorithm "fedavgg" (did you mean "fedavg"?)`},
		{[]string{"run", "--set", "algorithms=fedavg:ss=2"}, `unknown option (did you mean "s"?)`},
		{[]string{"help", "paradx"}, `unknown topic "paradx" (did you mean "paradox"?)`},
		{[]string{"run", "--rounds", "abc"}, `--rounds "abc": not a whole number`},
		{[]string{"run", "--seed", "99999999999999999999999"}, `--seed "99999999999999999999999": too large`},
	} {
		stdout, stderr, code := command(t, test.args...)
		checkUsageError(t, stdout, stderr, code)
		if !strings.Contains(stderr, test.want) {
			t.Errorf("%v: stderr %q, want %q", test.args, stderr, test.want)
		}
	}
	// No guess where none is close: the message lists what is allowed.
	_, stderr, _ := command(t, "run", "--set", "zzzz=1")
	if strings.Contains(stderr, "did you mean") || !strings.Contains(stderr, "allowed keys: eta") {
		t.Errorf("stderr %q: want no guess and the allowed keys", stderr)
	}
}

// TestCommandHelp: every command's --help (and help COMMAND) goes to
// standard output with exit 0, lists exactly the flags the command parses,
// the presets it accepts and the exit statuses.
func TestCommandHelp(t *testing.T) {
	for _, name := range []string{"presets", "run", "sweep", "merge"} {
		viaFlag, errs, code := command(t, name, "--help")
		if code != ExitOK || errs != "" {
			t.Fatalf("%s --help: exit %d, stderr %q", name, code, errs)
		}
		viaHelp, _, code := command(t, "help", name)
		if code != ExitOK || viaHelp != viaFlag {
			t.Errorf("help %s: exit %d, differs from %s --help", name, code, name)
		}
		if !strings.HasPrefix(viaFlag, "usage: fedscope "+name) || !strings.Contains(viaFlag, "exit status:") {
			t.Errorf("%s --help lacks the usage line or the exit statuses:\n%s", name, viaFlag)
		}
		// The flags listed are those of the command's own flag set.
		err := newApp(nil).command(t.Context(), []string{name, "--help"})
		h, ok := err.(helpRequest)
		if !ok {
			t.Fatalf("%s --help returned %v, want a help request", name, err)
		}
		h.fs.VisitAll(func(f *flag.Flag) {
			if flagArgs[f.Name] == "" {
				t.Errorf("%s: flag --%s has no value name in flagArgs", name, f.Name)
			}
			if !strings.Contains(viaFlag, "--"+f.Name+" "+flagArgs[f.Name]) {
				t.Errorf("%s --help does not list --%s", name, f.Name)
			}
		})
		for _, other := range []string{"--trials", "--pace", "--theme"} {
			if h.fs.Lookup(other[2:]) == nil && strings.Contains(viaFlag, other+" ") {
				t.Errorf("%s --help lists %s, which it does not take", name, other)
			}
		}
	}
	// run lists the run presets only, sweep the sweeps only.
	runHelp, _, _ := command(t, "run", "--help")
	sweepHelp, _, _ := command(t, "sweep", "--help")
	for _, p := range registry.Catalog().Presets() {
		line := "  " + p.Name + " "
		inRun, inSweep := strings.Contains(runHelp, line), strings.Contains(sweepHelp, line)
		if p.Scenario().IsSweep() != inSweep || p.Scenario().IsSweep() == inRun {
			t.Errorf("preset %s: in run --help %v, in sweep --help %v", p.Name, inRun, inSweep)
		}
	}
	for _, args := range [][]string{{"--help"}, {"-h"}, {"help"}} {
		out, _, code := command(t, args...)
		if code != ExitOK || !strings.Contains(out, "fedscope help TOPIC") || !strings.Contains(out, "mixture") {
			t.Errorf("%v: exit %d, overview %q", args, code, out)
		}
	}
	out, _, code := command(t, "help", "explore")
	if code != ExitOK || !strings.Contains(out, "--pace R|max") || !strings.Contains(out, "--theme dark|light|mono") {
		t.Errorf("help explore: exit %d, %q", code, out)
	}
	out, _, code = command(t, "help", "exit")
	if code != ExitOK || !strings.Contains(out, "130") || !strings.Contains(out, "2    bad input") {
		t.Errorf("help exit: exit %d, %q", code, out)
	}
}

// TestPresetHelp: help PRESET shows every key a person may set, with its
// current value, and the explorer's keys of that preset's view, each once.
func TestPresetHelp(t *testing.T) {
	cat := registry.Catalog()
	for _, p := range cat.Presets() {
		out, errs, code := command(t, "help", p.Name)
		if code != ExitOK || errs != "" {
			t.Fatalf("help %s: exit %d, stderr %q", p.Name, code, errs)
		}
		sc := p.Scenario()
		for _, k := range sc.Knobs() {
			if !strings.Contains(out, "\n  "+k.Name+" ") {
				t.Errorf("help %s does not list the key %s", p.Name, k.Name)
			}
		}
		keys := tui.Keys(cat, sc)
		if len(keys) < 5 {
			t.Fatalf("%s: %d explorer keys", p.Name, len(keys))
		}
		for _, k := range keys {
			if k.Help != "" && strings.Count(out, "\n  "+k.Keys+" ") != 1 {
				t.Errorf("help %s lists the explorer key %q %d times, want once", p.Name, k.Keys, strings.Count(out, "\n  "+k.Keys+" "))
			}
		}
		if !strings.Contains(out, "fedscope --preset "+p.Name) {
			t.Errorf("help %s does not say how to open it", p.Name)
		}
	}
	out, _, _ := command(t, "help", "paradox")
	if !strings.Contains(out, "stationary-point paradox") {
		t.Errorf("help paradox lacks the story:\n%s", out)
	}
}
