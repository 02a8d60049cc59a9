package experiment

import "testing"

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
