package experiment

import (
	"context"
	"errors"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
)

// RacerOf is a resolved racer of a scenario: its legend label, the spec it
// was written as (its identity: glyph and colour follow it), and how to run
// it on the data D its family prepared.
type RacerOf[D any] struct {
	Label string
	Spec  RacerSpec
	// Run iterates rounds communication rounds on data (what Prepare
	// returned), emitting one Round each (the family's metric values in its
	// Metrics order). A divergence is an *algorithms.DivergedError.
	Run func(ctx context.Context, data D, rounds int, emit func(Round)) error
}

// Racer is a racer as the engine sees it, its data untyped.
type Racer = RacerOf[any]

// RacerSpec is one racer as written in `--set algorithms=…`, e.g.
// "fedavg:s=5": an algorithm and the parameters it pins. Unpinned
// parameters follow the scenario.
type RacerSpec struct {
	Kind string
	Opts []RacerOpt // in the order the kind declares its options
}

// RacerOpt is one pinned parameter of a racer. An option of a kind that
// names its values (RacerOption.Words) keeps the word it was written with,
// and a flag (RacerOption.Flag) is written as its key alone, so that String
// gives back what ParseRacers read: "fedavg:batch=full", "fednewton:damped".
type RacerOpt struct {
	Key   string
	Value float64
	Word  string // the value's name, "" for a number
	Flag  bool   // written as ":key" (Value 1)
}

// Opt returns the value of a pinned option and whether it is pinned.
func (r RacerSpec) Opt(key string) (float64, bool) {
	for _, o := range r.Opts {
		if o.Key == key {
			return o.Value, true
		}
	}
	return 0, false
}

// With returns the spec with key pinned to v (options stay in the order
// they were declared in, new ones at the end).
func (r RacerSpec) With(key string, v float64) RacerSpec {
	opts := slices.Clone(r.Opts)
	for i := range opts {
		if opts[i].Key == key {
			opts[i].Value = v
			return RacerSpec{Kind: r.Kind, Opts: opts}
		}
	}
	return RacerSpec{Kind: r.Kind, Opts: append(opts, RacerOpt{Key: key, Value: v})}
}

// String returns the spec in the syntax ParseRacers reads.
func (r RacerSpec) String() string {
	var b strings.Builder
	b.WriteString(r.Kind)
	for _, o := range r.Opts {
		switch {
		case o.Flag:
			fmt.Fprintf(&b, ":%s", o.Key)
		case o.Word != "":
			fmt.Fprintf(&b, ":%s=%s", o.Key, o.Word)
		case o.Value == math.Trunc(o.Value) && math.Abs(o.Value) < 1e21:
			// b=1000000, not 1e+06, which a whole-number option refuses.
			fmt.Fprintf(&b, ":%s=%s", o.Key, strconv.FormatFloat(o.Value, 'f', -1, 64))
		default:
			fmt.Fprintf(&b, ":%s=%s", o.Key, FormatFloat(o.Value))
		}
	}
	return b.String()
}

// Equal reports whether two specs name the same racer.
func (r RacerSpec) Equal(o RacerSpec) bool { return r.String() == o.String() }

// RacerKind declares one algorithm a family races and the options it takes.
type RacerKind struct {
	Name    string
	Options []RacerOption
}

// RacerOption is one option of a racer kind: a whole number in [Min, Max],
// or a real number in (Min, Max] when Real; or one of the names in Words
// (its value is the name's index); or, when Flag, the key alone
// ("fednewton:damped", value 1).
type RacerOption struct {
	Key      string
	Min, Max float64
	Real     bool
	Words    []string
	Flag     bool
}

// Syntax writes the kinds as the help shows them, e.g.
// "fedavg[:s=N][:eta=X], fedprox[:eta=X]".
func Syntax(kinds []RacerKind) string {
	parts := make([]string, len(kinds))
	for i, k := range kinds {
		var b strings.Builder
		b.WriteString(k.Name)
		for _, o := range k.Options {
			v := "N"
			switch {
			case o.Flag:
				fmt.Fprintf(&b, "[:%s]", o.Key)
				continue
			case len(o.Words) > 0:
				v = strings.Join(o.Words, "|")
			case o.Real:
				v = "X"
			}
			fmt.Fprintf(&b, "[:%s=%s]", o.Key, v)
		}
		parts[i] = b.String()
	}
	return strings.Join(parts, ", ")
}

// ParseRacers reads a comma-separated racer list such as
// "fedavg:s=1,fedavg:s=5,fedprox" against the kinds a family declares.
// Options are stored in the kind's declared order.
func ParseRacers(v string, kinds []RacerKind) ([]RacerSpec, error) {
	if strings.TrimSpace(v) == "" {
		return nil, fmt.Errorf("no racer given")
	}
	var out []RacerSpec
	items := strings.Split(v, ",")
	for n, item := range items {
		item = strings.TrimSpace(item)
		if item == "" {
			// "fedavg,,fedprox" or "fedavg,": a racer left out by mistake
			// is not skipped silently.
			return nil, fmt.Errorf("entry %d of %d is empty (a doubled or trailing comma?)", n+1, len(items))
		}
		fields := strings.Split(item, ":")
		name := strings.ToLower(fields[0])
		i := slices.IndexFunc(kinds, func(k RacerKind) bool { return k.Name == name })
		if i < 0 {
			names := make([]string, len(kinds))
			for i, k := range kinds {
				names[i] = k.Name
			}
			return nil, fmt.Errorf("unknown algorithm %q%s", name, DidYouMean(name, names))
		}
		kind := kinds[i]
		vals := map[string]RacerOpt{}
		for _, opt := range fields[1:] {
			key, val, _ := strings.Cut(opt, "=")
			j := slices.IndexFunc(kind.Options, func(o RacerOption) bool { return o.Key == key })
			if j < 0 {
				keys := make([]string, len(kind.Options))
				for i, o := range kind.Options {
					keys[i] = o.Key
				}
				return nil, fmt.Errorf("racer %q, option %q: unknown option%s", item, opt, DidYouMean(key, keys))
			}
			if _, twice := vals[key]; twice {
				return nil, fmt.Errorf("racer %q, option %q: %s= given twice", item, opt, key)
			}
			x, err := kind.Options[j].parse(val, strings.Contains(opt, "="))
			if err != nil {
				return nil, fmt.Errorf("racer %q, option %q: %v", item, opt, err)
			}
			vals[key] = x
		}
		spec := RacerSpec{Kind: name}
		for _, o := range kind.Options {
			if x, ok := vals[o.Key]; ok {
				spec.Opts = append(spec.Opts, x)
			}
		}
		out = append(out, spec)
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("no racer given")
	}
	return out, nil
}

// parse reads an option's value (hasValue: the option was written with
// "=").
func (o RacerOption) parse(val string, hasValue bool) (RacerOpt, error) {
	out := RacerOpt{Key: o.Key}
	switch {
	case o.Flag:
		if hasValue {
			return out, fmt.Errorf("%s takes no value (write :%s)", o.Key, o.Key)
		}
		out.Flag, out.Value = true, 1
		return out, nil
	case len(o.Words) > 0:
		i := slices.Index(o.Words, strings.ToLower(val))
		if i < 0 {
			return out, fmt.Errorf("%q is not one of %s", val, strings.Join(o.Words, ", "))
		}
		out.Word, out.Value = o.Words[i], float64(i)
		return out, nil
	case !o.Real:
		n, err := readWhole(val)
		switch {
		case err != nil && !errors.Is(err, strconv.ErrRange):
			return out, fmt.Errorf("%q is not a whole number%s", val, meant(val, true))
		case err != nil || float64(n) < o.Min || float64(n) > o.Max:
			return out, fmt.Errorf("out of range %g..%g", o.Min, o.Max)
		}
		out.Value = float64(n)
		return out, nil
	}
	x, err := readReal(val)
	switch {
	case err != nil && !errors.Is(err, strconv.ErrRange):
		return out, fmt.Errorf("%q is not a number%s", val, meant(val, false))
	case err != nil || !(x > o.Min && x <= o.Max):
		return out, fmt.Errorf("out of range (%g, %g]", o.Min, o.Max)
	}
	out.Value = x
	return out, nil
}

// RacersKnob is the `algorithms` key of a family whose configuration C keeps
// its racer list in field.
func RacersKnob[C any](kinds []RacerKind, field func(*C) *[]RacerSpec) Knob {
	return TextKnob("algorithms", "comma-separated racers: "+Syntax(kinds),
		func(c *C) string {
			specs := *field(c)
			parts := make([]string, len(specs))
			for i, r := range specs {
				parts[i] = r.String()
			}
			return strings.Join(parts, ",")
		},
		func(c *C, v string) error {
			rs, err := ParseRacers(v, kinds)
			if err != nil {
				return &valueError{err.Error(), Syntax(kinds)}
			}
			*field(c) = rs
			return nil
		})
}

// CheckRacers validates a racer list against kinds, as an *InputError.
func CheckRacers(specs []RacerSpec, kinds []RacerKind) error {
	if len(specs) == 0 {
		return Errorf("algorithms: no racer selected; allowed: %s", Syntax(kinds))
	}
	for _, r := range specs {
		if _, err := ParseRacers(r.String(), kinds); err != nil {
			return Errorf("algorithms: %v", err)
		}
	}
	return nil
}
