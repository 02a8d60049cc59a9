// Package guardtest checks a family's memory guard (issue 13) the same way
// in every family's tests: with the memory available injected through the
// context, a scenario is refused one byte over its estimate, naming its
// knob, and runs at exactly its estimate.
package guardtest

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/fedscope/fedscope/experiment"
)

// Run checks the guard on the run scenario sc (keep it small: it is run).
func Run(t *testing.T, sc experiment.Scenario) {
	t.Helper()
	need, knob := sc.Family.Memory(sc)
	if need == 0 || knob == "" {
		t.Fatalf("Memory = %d bytes, knob %q; want a positive estimate and a knob", need, knob)
	}
	if _, ok := sc.Knob(knob); !ok {
		t.Errorf("Memory names %q, which is not a key of the scenario", knob)
	}
	limit := experiment.Headroom(need)
	ctx := experiment.WithMemory(context.Background(), limit-1)
	_, err := experiment.NewEngine().Run(ctx, sc, experiment.Observer{Round: func(experiment.Point) {
		t.Error("a round ran although the scenario was refused")
	}})
	var ie *experiment.InputError
	if !errors.As(err, &ie) || !strings.Contains(err.Error(), knob+"=") || !strings.Contains(err.Error(), "is available") {
		t.Errorf("one byte over the limit: err = %v; want an InputError naming %s= and the memory available", err, knob)
	}
	if strings.ContainsAny(err.Error(), "\n\r") {
		t.Errorf("the refusal spans lines: %q", err)
	}
	rounds := 0
	ctx = experiment.WithMemory(context.Background(), limit)
	_, err = experiment.NewEngine().Run(ctx, sc, experiment.Observer{Round: func(experiment.Point) { rounds++ }})
	if err != nil || rounds == 0 {
		t.Errorf("at the limit: err = %v after %d rounds; want a run", err, rounds)
	}
}

// Sweep checks the guard of a sweep scenario: refused when one point does
// not fit, and run (on fewer workers if need be) when one point does.
func Sweep(t *testing.T, sc experiment.Scenario) {
	t.Helper()
	var need uint64
	for i := range sc.Sweep.Grid {
		p, err := sc.PointScenario(i, 0)
		if err != nil {
			t.Fatal(err)
		}
		n, _ := p.Family.Memory(p)
		need = max(need, n)
	}
	limit := experiment.Headroom(need)
	err := experiment.RunSweep(experiment.WithMemory(context.Background(), limit-1), sc, func(experiment.TrialResult) {
		t.Error("a point ran although the sweep was refused")
	})
	var ie *experiment.InputError
	if !errors.As(err, &ie) || !strings.Contains(err.Error(), "the largest point of the sweep") {
		t.Errorf("one byte under the largest point: err = %v; want an InputError naming the largest point", err)
	}
	done := 0
	err = experiment.RunSweep(experiment.WithMemory(context.Background(), limit), sc, func(experiment.TrialResult) { done++ })
	if err != nil || done != len(sc.Sweep.Grid)*sc.Trials {
		t.Errorf("room for one point at a time: err = %v, %d of %d evaluations", err, done, len(sc.Sweep.Grid)*sc.Trials)
	}
}
