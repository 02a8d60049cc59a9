package experiment

import (
	"strings"
	"testing"
)

var testKinds = []RacerKind{{Name: "fedavg", Options: []RacerOption{{Key: "s", Min: 1, Max: 1000}, {Key: "b", Min: 0, Max: 1_000_000},
	{Key: "eta", Max: MaxFloat, Real: true}}}}

// TestRacerSpecReadsBack: every spec prints in a form ParseRacers reads
// back to the same spec, whole-number options included at their maximum
// (b=1000000 printed as 1e+06 was refused by its own check).
func TestRacerSpecReadsBack(t *testing.T) {
	for _, v := range []string{"fedavg:b=1000000", "fedavg:s=1000:eta=1000000", "fedavg:eta=1e-05", "fedavg:eta=0.1:b=999999"} {
		specs, err := ParseRacers(v, testKinds)
		if err != nil {
			t.Fatalf("ParseRacers(%q): %v", v, err)
		}
		again, err := ParseRacers(specs[0].String(), testKinds)
		if err != nil || !again[0].Equal(specs[0]) {
			t.Errorf("%q prints as %q, which reads back as %v (%v)", v, specs[0].String(), again, err)
		}
		if err := CheckRacers(specs, testKinds); err != nil {
			t.Errorf("CheckRacers(%q): %v", v, err)
		}
	}
}

// TestParseRacersRefusesEmptyEntries: a doubled or trailing comma is an
// error naming the entry, not a racer silently left out.
func TestParseRacersRefusesEmptyEntries(t *testing.T) {
	for v, want := range map[string]string{"fedavg,,fedavg:s=2": "entry 2 of 3 is empty", "fedavg,": "entry 2 of 2 is empty",
		",fedavg": "entry 1 of 2 is empty", " , ": "entry 1 of 2 is empty", "": "no racer given", "  ": "no racer given"} {
		if _, err := ParseRacers(v, testKinds); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("ParseRacers(%q): %v, want %q", v, err, want)
		}
	}
}

// TestRacerWordsAndFlags: an option with named values and a flag read back
// as written ("fedavg:batch=full", "fednewton:damped"), in the kind's order,
// and bad values are refused.
func TestRacerWordsAndFlags(t *testing.T) {
	kinds := []RacerKind{
		{Name: "fedavg", Options: []RacerOption{{Key: "tau", Min: 1, Max: 10}, {Key: "batch", Words: []string{"full"}}}},
		{Name: "fednewton", Options: []RacerOption{{Key: "damped", Flag: true}}},
	}
	specs, err := ParseRacers("fedavg:batch=FULL:tau=3,fednewton:damped,fednewton", kinds)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"fedavg:tau=3:batch=full", "fednewton:damped", "fednewton"}
	for i, s := range specs {
		if s.String() != want[i] {
			t.Errorf("racer %d = %q, want %q", i, s, want[i])
		}
		again, err := ParseRacers(s.String(), kinds)
		if err != nil || !again[0].Equal(s) {
			t.Errorf("%q does not read back: %v %v", s, again, err)
		}
	}
	if _, ok := specs[1].Opt("damped"); !ok {
		t.Error("damped not pinned")
	}
	if v, ok := specs[0].Opt("batch"); !ok || v != 0 {
		t.Errorf("batch = %v, %v; want the index 0 of full", v, ok)
	}
	for _, bad := range []string{"fedavg:batch=half", "fednewton:damped=1", "fedavg:batch"} {
		if _, err := ParseRacers(bad, kinds); err == nil {
			t.Errorf("%q accepted", bad)
		}
	}
	if got := Syntax(kinds); got != "fedavg[:tau=N][:batch=full], fednewton[:damped]" {
		t.Errorf("Syntax = %q", got)
	}
}
