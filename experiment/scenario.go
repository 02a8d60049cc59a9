package experiment

import (
	"fmt"
	"strconv"
	"strings"
)

// Limits of the common knobs, and of the sizes the families' knobs share:
// generous enough for any experiment of the papers, tight enough that a
// typo cannot exhaust memory or hang the machine.
const (
	MaxRounds  = 100_000
	MaxTrials  = 100_000
	MaxFloat   = 1e6 // the largest value a real-valued knob takes
	MaxClients = 10_000
	MaxDim     = 2_000 // features of a synthetic federation
	MaxSamples = 1_000_000
	MaxSteps   = 1_000 // local steps per round
)

// Scenario is everything that determines a run or a sweep: same scenario,
// same output.
type Scenario struct {
	Family Family
	Preset string // name of the preset it started from
	Rounds int    // communication rounds T (epochs for paper 001)
	Seed   uint64 // master seed of every random draw
	// Sweeps: the swept knob and its grid (Knob "" for a run), and the trials
	// per grid value, with seeds Seed, Seed+1, … (docs/papers.md §8).
	Sweep  SweepSpec
	Trials int
	// Config is the family's own configuration, a value of the family's
	// config type. Families replace its slices rather than writing into
	// them, so copies of a Scenario never share mutable state.
	Config any
}

// Update changes the family configuration of sc, of type C, in place.
func Update[C any](sc *Scenario, change func(c *C)) {
	c := configOf[C](*sc)
	change(&c)
	sc.Config = c
}

// Typed turns a function of a scenario and its family configuration C into
// a function of the scenario (for a sweep's Check, a knob's Refuse).
func Typed[C, R any](f func(sc Scenario, c C) R) func(Scenario) R {
	return func(sc Scenario) R { return f(sc, configOf[C](sc)) }
}

// IsSweep reports whether the scenario is a sweep rather than a run.
func (sc Scenario) IsSweep() bool { return sc.Sweep.Knob != "" }

// commonKnobs are the keys of every scenario.
var commonKnobs = []Knob{
	IntKnobOf("rounds", "communication rounds T", 1, MaxRounds, func(s *Scenario) *int { return &s.Rounds }),
	{
		Name: "seed", Help: "master seed of every random draw (a whole number ≥ 0)",
		get: func(s *Scenario) string { return strconv.FormatUint(s.Seed, 10) },
		set: func(s *Scenario, v string) error {
			n, err := ParseSeed(v)
			if err == nil {
				s.Seed = n
			}
			return err
		},
	},
}

// TrialsKnob is the `trials` key of the families with sweeps.
func TrialsKnob() Knob {
	return IntKnobOf("trials", "trials per swept value of a sweep", 1, MaxTrials, func(s *Scenario) *int { return &s.Trials })
}

// Knobs lists every key of the scenario: its family's, then rounds and seed.
func (sc Scenario) Knobs() []Knob {
	var out []Knob
	for _, k := range sc.Family.Knobs(sc) {
		if k.Name != "rounds" && k.Name != "seed" {
			out = append(out, k)
		}
	}
	return append(out, commonKnobs...)
}

// Knob finds a key of the scenario.
func (sc Scenario) Knob(key string) (Knob, bool) {
	for _, k := range sc.Knobs() {
		if k.Name == key {
			return k, true
		}
	}
	return Knob{}, false
}

// Set assigns one of the scenario's own keys from its textual value. The
// error is an *InputError naming the key, the value and what is allowed.
// Keys of other families are the Catalog's business (Catalog.Set).
func (sc *Scenario) Set(key, value string) error {
	if key == sc.Sweep.Knob && key != "" {
		return &InputError{Msg: fmt.Sprintf("%s=%q: %s is the knob this sweep varies (%s); allowed: any other key",
			key, value, key, sc.Sweep.describe())}
	}
	return sc.setKnob(key, value)
}

// setKnob is Set without the swept-knob guard.
func (sc *Scenario) setKnob(key, value string) error {
	k, ok := sc.Knob(key)
	if !ok {
		return &InputError{Msg: fmt.Sprintf("unknown key %q (value %q)%s; allowed keys: %s", key, value, DidYouMean(key, settable(*sc)), strings.Join(settable(*sc), ", "))}
	}
	if k.Refuse != nil {
		if why := k.Refuse(*sc); why != "" {
			return &InputError{Msg: fmt.Sprintf("%s=%q: %s", key, value, why)}
		}
	}
	if err := k.set(sc, strings.TrimSpace(value)); err != nil {
		// The knob's error says what is wrong and what is allowed (the
		// help would repeat it).
		return &InputError{Msg: fmt.Sprintf("%s=%q: %v", key, value, err)}
	}
	return nil
}

// Get returns the textual value of a key, or "" for an unknown one.
func (sc Scenario) Get(key string) string {
	if k, ok := sc.Knob(key); ok {
		return k.get(&sc)
	}
	return ""
}

// InertSettings names, among the keys a user set, those whose value
// changes nothing in sc, with the reason: "batch_norm=batch has no effect:
// no racer takes minibatch steps". The swept knob always acts.
func (sc Scenario) InertSettings(keys []string) []string {
	var out []string
	seen := map[string]bool{}
	for _, key := range keys {
		k, ok := sc.Knob(key)
		if !ok || k.Inert == nil || seen[key] || key == sc.Sweep.Knob {
			continue
		}
		seen[key] = true
		if why := k.Inert(sc); why != "" {
			out = append(out, fmt.Sprintf("%s=%s has no effect: %s", key, k.get(&sc), why))
		}
	}
	return out
}

// KnobNames lists the scenario's keys in help order.
func (sc Scenario) KnobNames() []string {
	var names []string
	for _, k := range sc.Knobs() {
		names = append(names, k.Name)
	}
	return names
}

// Validate reports the first problem of the scenario as an *InputError.
func (sc Scenario) Validate() error {
	if sc.Family == nil {
		return &InputError{Msg: "no family: the scenario was not built from a preset"}
	}
	if sc.Rounds < 1 || sc.Rounds > MaxRounds {
		return &InputError{Msg: fmt.Sprintf("rounds=%d: must lie in 1..%d", sc.Rounds, MaxRounds)}
	}
	if err := sc.Family.Validate(sc); err != nil {
		return err
	}
	return sc.validateSweep()
}

// Racers resolves the scenario's racers (Family.Racers).
func (sc Scenario) Racers() []Racer { return sc.Family.Racers(sc) }

// Labels lists the legend labels of the scenario's racers, or of its sweep
// curves.
func (sc Scenario) Labels() []string {
	if sw := sc.Family.Sweeps(); sw != nil && sc.IsSweep() {
		return sw.SweepLabels(sc)
	}
	var out []string
	for _, r := range sc.Racers() {
		out = append(out, r.Label)
	}
	return out
}

// Summary is the one-line description shown under the title: the family's
// facts before the data are prepared, or the sweep summary.
func (sc Scenario) Summary() string {
	if sw := sc.Family.Sweeps(); sw != nil && sc.IsSweep() {
		return sw.SweepSummary(sc)
	}
	return sc.Family.Facts(sc, nil).Summary
}

// InputError is bad user input: a one-line message naming the key, the value
// and what is allowed. The command line exits with status 2 on it.
type InputError struct{ Msg string }

func (e *InputError) Error() string { return e.Msg }

// Errorf returns an *InputError with a formatted message.
func Errorf(format string, args ...any) error { return &InputError{Msg: fmt.Sprintf(format, args...)} }

// FormatFloat writes x in the shortest form that reads back exactly.
func FormatFloat(x float64) string { return strconv.FormatFloat(x, 'g', -1, 64) }
