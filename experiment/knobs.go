package experiment

import (
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/fedscope/fedscope/datasets"
	"github.com/fedscope/fedscope/model"
)

// Limits of the knobs: generous enough for any experiment of the papers,
// tight enough that a typo cannot exhaust memory or hang the machine.
const (
	maxRounds  = 100_000
	maxClients = 10_000
	maxDim     = 2_000
	maxSamples = 1_000_000
	maxSteps   = 1_000
	maxFloat   = 1e6
	maxTrials  = 100_000
)

// Knob is one scenario parameter a person can set with `--set name=value`.
type Knob struct {
	Name string
	Help string // what it means and what is allowed
	get  func(*Scenario) string
	set  func(*Scenario, string) error
}

// Knobs lists every settable parameter, in the order the help shows them.
func Knobs() []Knob { return knobs }

var knobs = []Knob{
	floatKnob("eta", "step size η of every racer", func(s *Scenario) *float64 { return &s.Eta }, false),
	intKnob("local_steps", "local steps s of FedAvg racers that do not pin s", 1, maxSteps, func(s *Scenario) *int { return &s.LocalSteps }),
	intKnob("batch", "minibatch size B (0 = full batch)", 0, maxSamples, func(s *Scenario) *int { return &s.Batch }),
	intKnob("clients", "number of clients M", 1, maxClients, func(s *Scenario) *int { return &s.Data.Clients }),
	intKnob("dim", "feature dimension d", 1, maxDim, func(s *Scenario) *int { return &s.Data.Dim }),
	intKnob("samples", "samples n_i per (data-rich) client", 1, maxSamples, func(s *Scenario) *int { return &s.Data.Samples }),
	intKnob("scarce_clients", "how many clients are data-scarce", 0, maxClients, func(s *Scenario) *int { return &s.Data.ScarceClients }),
	intKnob("scarce_samples", "samples n_i per data-scarce client", 1, maxSamples, func(s *Scenario) *int { return &s.Data.ScarceSamples }),
	floatKnob("noise", "label noise σ", func(s *Scenario) *float64 { return &s.Data.Noise }, true),
	floatKnob("gamma", "model heterogeneity Γ", func(s *Scenario) *float64 { return &s.Data.Gamma }, true),
	{
		Name: "gamma_scheme", Help: "how Γ is realised: radius or exact",
		get: func(s *Scenario) string { return s.Data.Scheme.String() },
		set: func(s *Scenario, v string) error {
			switch v {
			case "radius":
				s.Data.Scheme = datasets.GammaRadius
			case "exact":
				s.Data.Scheme = datasets.GammaExact
			default:
				return fmt.Errorf("must be radius or exact")
			}
			return nil
		},
	},
	intKnob("subspace_dim", "covariate subspace dimension r (0 = dim, no covariate shift)", 0, maxDim, func(s *Scenario) *int { return &s.Data.SubspaceDim }),
	intKnob("rounds", "communication rounds T", 1, maxRounds, func(s *Scenario) *int { return &s.Rounds }),
	{
		Name: "seed", Help: "master seed of every random draw (a whole number ≥ 0)",
		get: func(s *Scenario) string { return strconv.FormatUint(s.Seed, 10) },
		set: func(s *Scenario, v string) error {
			n, err := strconv.ParseUint(v, 10, 64)
			if err != nil {
				return fmt.Errorf("must be a whole number ≥ 0")
			}
			s.Seed = n
			return nil
		},
	},
	intKnob("trials", "trials per swept value of a sweep", 1, maxTrials, func(s *Scenario) *int { return &s.Trials }),
	{
		Name: "fed_error", Help: "federated error of a sweep's gain: min (over rounds), final (round) or limit (closed form)",
		get: func(s *Scenario) string { return s.FedError.String() },
		set: func(s *Scenario, v string) error {
			e, err := model.ParseFedError(v)
			s.FedError = e
			return err
		},
	},
	{
		Name: "fg_ratio", Help: "federation gain as the ratio of errors (norm) or of squared errors (squared)",
		get: func(s *Scenario) string {
			if s.Squared {
				return "squared"
			}
			return "norm"
		},
		set: func(s *Scenario, v string) error {
			switch v {
			case "norm", "squared":
				s.Squared = v == "squared"
				return nil
			}
			return fmt.Errorf("must be norm or squared")
		},
	},
	{
		Name: "algorithms", Help: "comma-separated racers: " + racerSyntax,
		get: func(s *Scenario) string {
			parts := make([]string, len(s.Racers))
			for i, r := range s.Racers {
				parts[i] = r.String()
			}
			return strings.Join(parts, ",")
		},
		set: func(s *Scenario, v string) error {
			rs, err := parseRacersFor(s.Family, v)
			if err != nil {
				return err
			}
			s.Racers = rs
			return nil
		},
	},
}

const racerSyntax = "fedavg[:s=N][:b=N][:eta=X] or fedprox[:b=N][:eta=X]"

// Set assigns one knob from its textual value. The error is an *InputError
// naming the key, the value and what is allowed.
func (sc *Scenario) Set(key, value string) error {
	if key == sc.Sweep.Knob && key != "" {
		return &InputError{Msg: fmt.Sprintf("%s=%q: %s is the knob this sweep varies (%s); allowed: any other key",
			key, value, key, sc.Sweep.describe())}
	}
	if key == "samples" && sc.Family == FamilyNewton && sc.Sweep.Knob == "clients" {
		return &InputError{Msg: fmt.Sprintf("samples=%q: the local-size sweep sets samples = total_samples/clients (%s); allowed: total_samples",
			value, sc.Sweep.describe())}
	}
	return sc.setKnob(key, value)
}

// setKnob is Set without the swept-knob guard.
func (sc *Scenario) setKnob(key, value string) error {
	table := knobsFor(sc.Family)
	i := slices.IndexFunc(table, func(k Knob) bool { return k.Name == key })
	if i < 0 {
		return unknownKnob(sc, key, value)
	}
	if err := table[i].set(sc, strings.TrimSpace(value)); err != nil {
		help := table[i].Help
		if key == "algorithms" {
			help = "comma-separated racers: " + racerSyntaxFor(sc.Family)
		}
		return &InputError{Msg: fmt.Sprintf("%s=%q: %v (%s)", key, value, err, help)}
	}
	return nil
}

// Get returns the textual value of a knob, or "" for an unknown key.
func (sc *Scenario) Get(key string) string {
	for _, k := range knobsFor(sc.Family) {
		if k.Name == key {
			return k.get(sc)
		}
	}
	return ""
}

// SetAll applies "key=value" assignments in order, then validates the whole
// scenario so that cross-knob limits (e.g. subspace_dim ≤ dim) are checked.
func (sc *Scenario) SetAll(assignments []string) error {
	for _, a := range hoistData(assignments) {
		key, value, ok := strings.Cut(a, "=")
		if !ok {
			return &InputError{Msg: fmt.Sprintf("--set %q: expected key=value, e.g. eta=0.05", a)}
		}
		if err := sc.Set(strings.TrimSpace(key), value); err != nil {
			return err
		}
	}
	return sc.Validate()
}

func intKnob(name, help string, lo, hi int, field func(*Scenario) *int) Knob {
	return Knob{
		Name: name, Help: fmt.Sprintf("%s, a whole number in %d..%d", help, lo, hi),
		get: func(s *Scenario) string { return strconv.Itoa(*field(s)) },
		set: func(s *Scenario, v string) error {
			n, err := strconv.Atoi(v)
			if err != nil {
				return fmt.Errorf("not a whole number")
			}
			if n < lo || n > hi {
				return fmt.Errorf("out of range")
			}
			*field(s) = n
			return nil
		},
	}
}

func floatKnob(name, help string, field func(*Scenario) *float64, zeroOK bool) Knob {
	bound := "> 0"
	if zeroOK {
		bound = "≥ 0"
	}
	return Knob{
		Name: name, Help: fmt.Sprintf("%s, a number %s and ≤ %g", help, bound, maxFloat),
		get: func(s *Scenario) string { return formatFloat(*field(s)) },
		set: func(s *Scenario, v string) error {
			x, err := strconv.ParseFloat(v, 64)
			if err != nil {
				return fmt.Errorf("not a number")
			}
			if math.IsNaN(x) || x > maxFloat || x < 0 || (x == 0 && !zeroOK) {
				return fmt.Errorf("out of range")
			}
			*field(s) = x
			return nil
		},
	}
}

// ParseRacers reads a racer list such as "fedavg:s=1,fedavg:s=5,fedprox".
func ParseRacers(v string) ([]RacerSpec, error) {
	return parseRacerList(v, func(kind string) error {
		if kind != KindFedAvg && kind != KindFedProx {
			return fmt.Errorf("unknown algorithm %q", kind)
		}
		return nil
	}, func(r *RacerSpec, k, val string) (err error) {
		switch {
		case k == "s" && r.Kind == KindFedAvg:
			r.LocalSteps, err = intOption(val, 1, maxSteps)
		case k == "b":
			r.Batch, err = intOption(val, 0, maxSamples)
		case k == "eta":
			r.Eta, err = positiveOption(val)
		default:
			err = fmt.Errorf("unknown option")
		}
		return err
	})
}

// parseRacerList reads a comma-separated list of racers "kind[:key=value]…":
// kind checks the algorithm's name, option sets one option of a racer.
func parseRacerList(v string, kind func(string) error, option func(r *RacerSpec, key, value string) error) ([]RacerSpec, error) {
	var out []RacerSpec
	for _, item := range strings.Split(v, ",") {
		item = strings.TrimSpace(item)
		if item == "" {
			continue
		}
		fields := strings.Split(item, ":")
		r := RacerSpec{Kind: strings.ToLower(fields[0]), Batch: -1}
		if err := kind(r.Kind); err != nil {
			return nil, err
		}
		for _, opt := range fields[1:] {
			k, val, _ := strings.Cut(opt, "=")
			if err := option(&r, k, val); err != nil {
				return nil, fmt.Errorf("racer %q, option %q: %v", item, opt, unwrapNum(err))
			}
		}
		out = append(out, r)
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("no racer given")
	}
	return out, nil
}

// intOption reads a whole number in lo..hi.
func intOption(val string, lo, hi int) (int, error) {
	n, err := strconv.Atoi(val)
	if err == nil && (n < lo || n > hi) {
		err = fmt.Errorf("out of range %d..%d", lo, hi)
	}
	return n, err
}

// positiveOption reads a number in (0, maxFloat].
func positiveOption(val string) (float64, error) {
	x, err := strconv.ParseFloat(val, 64)
	if err == nil && !(x > 0 && x <= maxFloat) {
		err = fmt.Errorf("out of range (0, %g]", maxFloat)
	}
	return x, err
}

// unwrapNum shortens strconv's verbose errors to what a person needs.
func unwrapNum(err error) error {
	var ne *strconv.NumError
	if e, ok := err.(*strconv.NumError); ok {
		ne = e
		return fmt.Errorf("%q is not a number", ne.Num)
	}
	return err
}
