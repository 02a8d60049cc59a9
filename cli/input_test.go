package cli

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/fedscope/fedscope/experiment"
	"github.com/fedscope/fedscope/experiment/registry"
)

// TestBadSet checks docs/design.md's contract for `--set`: every bad assignment is
// an *InputError whose one-line message names the key, the value and what is
// allowed, and the command line exits with status 2, printing exactly one
// line to stderr and nothing to stdout.
func TestBadSet(t *testing.T) {
	for _, test := range []struct {
		name, set  string
		key, value string // must both appear in the message
		allowed    string // a hint of what is allowed, also in the message
	}{
		{"unknown key", "nosuchknob=xyz", "nosuchknob", "xyz", "allowed keys"},
		{"malformed int", "clients=12x", "clients", "12x", "1..10000"},
		{"malformed float", "noise=0.5.5", "noise", "0.5.5", "≥ 0"},
		{"int out of range", "clients=99999", "clients", "99999", "1..10000"},
		{"zero dim", "dim=0", "dim", "0", "1..2000"},
		{"negative noise", "noise=-0.5", "noise", "-0.5", "≥ 0"},
		{"eta zero", "eta=0", "eta", "0", "> 0"},
		{"eta not a number", "eta=abc", "eta", "abc", "> 0"},
		{"eta NaN", "eta=NaN", "eta", "NaN", "> 0"},
		{"eta infinite", "eta=Inf", "eta", "Inf", "> 0"},
		{"subspace over dim", "subspace_dim=101", "subspace_dim", "101", "dim=100"},
		{"unknown algorithm", "algorithms=foo", "algorithms", "foo", "fedavg"},
		{"zero local steps", "algorithms=fedavg:s=0", "algorithms", "fedavg:s=0", "1..1000"},
		{"unknown racer option", "algorithms=fedavg:q=1", "algorithms", "fedavg:q=1", "fedavg[:s=N]"},
		{"s on fedprox", "algorithms=fedprox:s=2", "algorithms", "fedprox:s=2", "fedprox[:b=N]"},
		{"option given twice", "algorithms=fedavg:s=1:s=5", "algorithms", "fedavg:s=1:s=5", "s= given twice"},
		{"no racer", "algorithms=", "algorithms", `""`, "fedavg"},
		{"unknown gamma scheme", "gamma_scheme=nope", "gamma_scheme", "nope", "radius or exact"},
		{"missing equals", "eta0.1", "eta0.1", "eta0.1", "key=value"},
		{"negative batch", "batch=-1", "batch", "-1", "0..1000000"},
		{"negative seed", "seed=-3", "seed", "-3", "≥ 0"},
		{"zero rounds", "rounds=0", "rounds", "0", "1..100000"},
		{"scarce over clients", "scarce_clients=26", "scarce_clients", "26", "clients=25"},
		// Issue 22: no silent skipping, no setting without effect, a batch
		// larger than every client refused naming batch at every size.
		{"empty racer entry", "algorithms=fedavg,,fedprox", "algorithms", "fedavg,,fedprox", "entry 2 of 3 is empty"},
		{"trailing comma", "algorithms=fedavg:s=2,", "algorithms", "fedavg:s=2,", "entry 2 of 2 is empty"},
		{"scarce samples without scarce clients", "scarce_samples=3", "scarce_samples", "3", "scarce_clients ≥ 1"},
		{"batch above n_i", "batch=501", "batch", "501", "1..500"},
		{"batch far above n_i", "batch=1000", "batch", "1000", "1..500"},
		{"batch at the key's maximum", "batch=1000000", "batch", "1000000", "1..500"},
		{"pinned b above n_i", "algorithms=fedavg:b=100000", "algorithms", "b=100000", "b in 1..500"},
		{"racer option in hexadecimal", "algorithms=fedavg:s=0x2", "algorithms", "0x2", "not a whole number"},
		{"real in hexadecimal", "eta=0x1p-3", "eta", "0x1p-3", "not a number"},
	} {
		t.Run(test.name, func(t *testing.T) {
			check := func(what, msg string) {
				t.Helper()
				for _, want := range []string{test.key, test.value, test.allowed} {
					if !strings.Contains(msg, want) {
						t.Errorf("%s: message %q does not mention %q", what, msg, want)
					}
				}
			}

			cat := registry.Catalog()
			_, err := cat.Apply(cat.Presets()[0].Scenario(), []string{test.set})
			var ie *experiment.InputError
			if !errors.As(err, &ie) {
				t.Fatalf("Apply(%q) = %v (%T), want an *InputError", test.set, err, err)
			}
			check("Apply", ie.Error())
			if strings.Contains(ie.Error(), "\n") {
				t.Errorf("message %q spans several lines", ie.Error())
			}

			stdout, stderr, code := command(t, "run", "--preset", "paradox", "--rounds", "1", "--set", test.set)
			checkUsageError(t, stdout, stderr, code)
			check("stderr", stderr)
		})
	}
}

// TestBadFlags covers the flags other than --set.
func TestBadFlags(t *testing.T) {
	for _, test := range []struct {
		args []string
		want []string // substrings of the message
	}{
		{[]string{"--preset", "nosuchpreset"}, []string{"nosuchpreset", "paradox"}},
		{[]string{"--preset", ""}, []string{"preset", "paradox"}},
		{[]string{"--format", "xml"}, []string{"xml", "csv", "jsonl"}},
		{[]string{"--rounds", "0"}, []string{`--rounds "0"`, "1..100000"}},
		{[]string{"--rounds", "-1"}, []string{`--rounds "-1"`, "1..100000"}},
		{[]string{"--rounds", "100001"}, []string{"100001", "1..100000"}},
		{[]string{"--rounds", "abc"}, []string{"abc", "rounds"}},
		{[]string{"--seed", "-1"}, []string{`--seed "-1"`, "≥ 0"}},
		{[]string{"--seed", "x"}, []string{"x", "seed"}},
		{[]string{"--nosuchflag"}, []string{"nosuchflag"}},
		{[]string{"--set"}, []string{"set"}},
		{[]string{"stray"}, []string{"stray"}},
	} {
		t.Run(strings.Join(test.args, " "), func(t *testing.T) {
			stdout, stderr, code := command(t, append([]string{"run"}, test.args...)...)
			checkUsageError(t, stdout, stderr, code)
			for _, want := range test.want {
				if !strings.Contains(stderr, want) {
					t.Errorf("message %q does not mention %q", stderr, want)
				}
			}
		})
	}
	// Without a command fedscope opens the explorer, which needs a terminal:
	// on any other standard output it exits 2 and names the headless command
	// instead (two lines: the reason, and the command to copy).
	t.Run("no command", func(t *testing.T) {
		stdout, stderr, code := command(t)
		if code != ExitUsage || stdout != "" || strings.Contains(stderr, "panic") {
			t.Errorf("exit %d, stdout %q, stderr %q; want 2, nothing on stdout", code, stdout, stderr)
		}
		if !strings.Contains(stderr, "not a terminal") || !strings.Contains(stderr, "fedscope run --preset paradox") {
			t.Errorf("stderr %q does not explain the headless command", stderr)
		}
	})
	t.Run("unknown command", func(t *testing.T) {
		// On the command line an unknown word is an argument of the explorer…
		stdout, stderr, code := command(t, "nosuchcommand")
		checkUsageError(t, stdout, stderr, code)
		// …and the headless dispatcher names the commands.
		stdout, stderr, code = runCmd(context.Background(), newApp(nil), "nosuchcommand")
		checkUsageError(t, stdout, stderr, code)
		if !strings.Contains(stderr, "presets, run, sweep") {
			t.Errorf("stderr %q does not name the commands", stderr)
		}
	})
	t.Run("presets with an argument", func(t *testing.T) {
		stdout, stderr, code := command(t, "presets", "extra")
		checkUsageError(t, stdout, stderr, code)
	})
}

// TestFlagsScenario checks that the scenario flags report bad flags as
// *InputError values, for callers (the explorer) that do not go through a
// headless command.
func TestFlagsScenario(t *testing.T) {
	cat := registry.Catalog()
	for _, args := range [][]string{
		{"--preset", "nope"},
		{"--rounds", "0"},
		{"--seed", "-1"},
		{"--set", "eta=abc"},
	} {
		fs := newFlagSet("test")
		var f scenarioFlags
		f.register(fs)
		if err := parseFlags(fs, args); err != nil {
			t.Fatalf("parseFlags(%q): %v", args, err)
		}
		_, err := f.scenario(cat)
		var ie *experiment.InputError
		if !errors.As(err, &ie) {
			t.Errorf("scenario() after %q = %v, want an *InputError", args, err)
		}
	}
	// Defaults are the preset's.
	fs := newFlagSet("test")
	var f scenarioFlags
	f.register(fs)
	if err := parseFlags(fs, nil); err != nil {
		t.Fatal(err)
	}
	sc, err := f.scenario(cat)
	p, perr := cat.Lookup(registry.DefaultPreset)
	if perr != nil {
		t.Fatal(perr)
	}
	want := p.Scenario()
	if err != nil || sc.Rounds != want.Rounds || sc.Seed != want.Seed || sc.Preset != registry.DefaultPreset {
		t.Errorf("no flags: got rounds %d seed %d preset %q (err %v), want the %s preset's %d, %d",
			sc.Rounds, sc.Seed, sc.Preset, err, registry.DefaultPreset, want.Rounds, want.Seed)
	}
}

// TestPresets: `fedscope presets` lists every preset of every family once,
// with its summary, and exits 0.
func TestPresets(t *testing.T) {
	stdout, stderr, code := command(t, "presets")
	if code != ExitOK || stderr != "" {
		t.Fatalf("exit %d, stderr %q", code, stderr)
	}
	lines := strings.Split(strings.TrimSuffix(stdout, "\n"), "\n")
	presets := registry.Catalog().Presets()
	if len(lines) != len(presets) {
		t.Fatalf("%d lines for %d presets:\n%s", len(lines), len(presets), stdout)
	}
	for i, p := range presets {
		name, summary, _ := strings.Cut(lines[i], " ")
		if name != p.Name || strings.TrimSpace(summary) != p.Summary {
			t.Errorf("line %d %q, want %s and its summary", i+1, lines[i], p.Name)
		}
	}
}

// TestFlagsReadNumbersAsSet checks that --rounds, --seed and --trials read
// a value exactly as --set rounds=, seed= and trials= do: both refuse it
// (exit status 2, one line), or both accept it and give the scenario the
// same number. The flag package alone read 010 as octal 8 and accepted
// 0x10, 0b11 and 1_0.
func TestFlagsReadNumbersAsSet(t *testing.T) {
	cat := registry.Catalog()
	values := []string{"10", "010", "+10", " 10 ", "0x10", "0X10", "0b11", "0o17", "017", "1_0", "1e1", "10.0", "1,000",
		"", "-0", "0", "-1", "abc", "100000", "100001", "18446744073709551615", "18446744073709551616",
		"9223372036854775808", "-9223372036854775809", "١٠"}
	scenario := func(preset string, args ...string) (experiment.Scenario, error) {
		fs := newFlagSet("sweep")
		var f scenarioFlags
		f.register(fs)
		if err := parseFlags(fs, append([]string{"--preset", preset}, args...)); err != nil {
			return experiment.Scenario{}, err
		}
		return f.scenario(cat)
	}
	for _, key := range []string{"rounds", "seed"} {
		for _, v := range values {
			byFlag, errFlag := scenario("paradox", "--"+key, v)
			bySet, errSet := scenario("paradox", "--set", key+"="+v)
			switch {
			case (errFlag == nil) != (errSet == nil):
				t.Errorf("%s %q: --%s gives error %v, --set gives %v", key, v, key, errFlag, errSet)
			case errFlag == nil && (byFlag.Rounds != bySet.Rounds || byFlag.Seed != bySet.Seed):
				t.Errorf("%s %q: --%s gives rounds %d seed %d, --set gives rounds %d seed %d",
					key, v, key, byFlag.Rounds, byFlag.Seed, bySet.Rounds, bySet.Seed)
			}
		}
	}
	// --trials is a flag of sweep only; it is read in prepare.
	for _, v := range values {
		a := newApp(cat)
		a.stdout, a.stderr = &strings.Builder{}, &strings.Builder{}
		j, errFlag := a.prepare(context.Background(), "sweep", []string{"--preset", "polynomial", "--trials", v})
		bySet, errSet := scenario("polynomial", "--set", "trials="+v)
		switch {
		case (errFlag == nil) != (errSet == nil):
			t.Errorf("trials %q: --trials gives error %v, --set gives %v", v, errFlag, errSet)
		case errFlag == nil && j.sc.Trials != bySet.Trials:
			t.Errorf("trials %q: --trials gives %d, --set gives %d", v, j.sc.Trials, bySet.Trials)
		}
		if j != nil {
			j.target.Abort()
		}
	}
	// The cases the flag package read otherwise, spelled out.
	for v, want := range map[string]int{"010": 10, "+7": 7} {
		sc, err := scenario("paradox", "--rounds", v)
		if err != nil || sc.Rounds != want {
			t.Errorf("--rounds %q: %d rounds (%v), want %d", v, sc.Rounds, err, want)
		}
	}
	for _, args := range [][]string{{"--rounds", "0x10"}, {"--rounds", "0b11"}, {"--rounds", "1_0"}, {"--seed", "0x10"},
		{"--seed", "0o7"}} {
		stdout, stderr, code := command(t, append([]string{"run"}, args...)...)
		checkUsageError(t, stdout, stderr, code)
		if !strings.Contains(stderr, "not a whole number") {
			t.Errorf("%v: %q, want “not a whole number”", args, stderr)
		}
	}
}
