package registry_test

import (
	"context"
	"math"
	"strconv"
	"testing"
	"time"

	"github.com/fedscope/fedscope/experiment"
	"github.com/fedscope/fedscope/experiment/registry"
	"github.com/fedscope/fedscope/internal/cputime"
)

// BenchmarkLiveKeys is every key of the run view that re-runs a trajectory,
// on every run preset: the engine is warm with the preset, then each key
// press is timed with a value the engine has never seen, cpu-ms/op the CPU
// time per press (user + system, all goroutines). A knob with a decimal
// value is set to its next step times 1 + i·1e-9 (a new η, Γ, α, …);
// an integer knob (local steps, batch size, rank) takes its next step
// from a state at a new η, set untimed before the press, so that nothing
// derived from the last η is kept; "seed" is the n key (a new seed: new
// data). Which caches a press still hits is in docs/performance.md.
func BenchmarkLiveKeys(b *testing.B) {
	for _, p := range registry.Catalog().Presets() {
		base := p.Scenario()
		if base.IsSweep() {
			continue
		}
		for _, k := range base.Knobs() {
			if k.Live == nil {
				continue
			}
			b.Run(p.Name+"/"+k.Name, func(b *testing.B) { benchKey(b, base, k) })
		}
		b.Run(p.Name+"/seed", func(b *testing.B) {
			e := experiment.NewEngine()
			race(b, e, base)
			sc := base
			timed(b, func(i int) (experiment.Scenario, bool) {
				sc.Seed = base.Seed + uint64(i) + 1
				return sc, true
			}, e)
		})
	}
}

// benchKey times the presses of one live knob's up key.
func benchKey(b *testing.B, base experiment.Scenario, k experiment.Knob) {
	e := experiment.NewEngine()
	race(b, e, base)
	next, err := k.Live.Step(base, true)
	if err != nil {
		b.Skip("the key does nothing on the preset: ", err)
	}
	v, err := strconv.ParseFloat(k.Get(next), 64)
	decimal := err == nil && v != math.Trunc(v)
	eta, hasEta := knob(base, "eta")
	timed(b, func(i int) (experiment.Scenario, bool) {
		if decimal {
			sc := base
			if err := sc.Set(k.Name, experiment.FormatFloat(v*(1+float64(i+1)*1e-9))); err != nil {
				b.Fatal(err)
			}
			return sc, true
		}
		if !hasEta {
			return next, true
		}
		// The state before the press, at a new η (untimed).
		sc := base
		if err := sc.Set("eta", experiment.FormatFloat(eta*(1+float64(i+1)*1e-9))); err != nil {
			b.Fatal(err)
		}
		race(b, e, sc)
		pressed, err := k.Live.Step(sc, true)
		if err != nil {
			b.Fatal(err)
		}
		return pressed, true
	}, e)
}

// knob returns the value of a decimal knob of sc.
func knob(sc experiment.Scenario, name string) (float64, bool) {
	for _, k := range sc.Knobs() {
		if k.Name == name {
			v, err := strconv.ParseFloat(k.Get(sc), 64)
			return v, err == nil
		}
	}
	return 0, false
}

// timed runs b.N presses: press(i) returns the scenario after press i
// (doing untimed work first), whose race is timed.
func timed(b *testing.B, press func(i int) (experiment.Scenario, bool), e *experiment.Engine) {
	b.ReportAllocs()
	var cpu time.Duration
	for i := 0; b.Loop(); i++ {
		b.StopTimer()
		sc, _ := press(i)
		b.StartTimer()
		start := cputime.Process()
		race(b, e, sc)
		cpu += cputime.Process() - start
	}
	if cpu > 0 {
		b.ReportMetric(float64(cpu)/1e6/float64(b.N), "cpu-ms/op")
	}
}

func race(tb testing.TB, e *experiment.Engine, sc experiment.Scenario) {
	tb.Helper()
	res, err := e.Run(context.Background(), sc, experiment.Observer{})
	if err != nil {
		tb.Fatal(err)
	}
	if failed := res.Failed(); len(failed) > 0 {
		tb.Fatal(failed)
	}
}
