package linear

import (
	"slices"

	"github.com/fedscope/fedscope/experiment"
)

// Canonical implements experiment.Canonicalizer, for the shards of a sweep
// (issue 22): racers written in different ways that race the same
// algorithms are written one way, so that shards computed from either
// spelling merge. An option pinned to the value the scenario gives an
// unpinned racer anyway is dropped (fedavg:s=10 with local_steps=10,
// fedavg:eta=0.1 with eta=0.1, b=0 with batch=0), then a racer equal to
// an earlier one (resolve keeps the first). A pin stays whenever the
// sweep may change the value it is compared with: the option's knob is
// the swept one, or the sweep adjusts other knobs at each value (the
// covariate sweep's η = 0.1·r/d).
func (sweeps) Canonical(sc experiment.Scenario, c Config) Config {
	varies := func(knob string) bool { return sc.Sweep.Knob == knob || sc.Sweep.Adjust != nil }
	var out []experiment.RacerSpec
	for _, r := range c.Racers {
		spec := experiment.RacerSpec{Kind: r.Kind}
		for _, o := range r.Opts {
			redundant := false
			switch o.Key {
			case "s":
				redundant = r.Kind == KindFedAvg && o.Value == float64(c.LocalSteps) && !varies("local_steps")
			case "b":
				redundant = o.Value == float64(c.Batch) && !varies("batch")
			case "eta":
				redundant = o.Value == c.Eta && !varies("eta")
			}
			if !redundant {
				spec.Opts = append(spec.Opts, o)
			}
		}
		if !slices.ContainsFunc(out, spec.Equal) {
			out = append(out, spec)
		}
	}
	c.Racers = out
	return c
}
