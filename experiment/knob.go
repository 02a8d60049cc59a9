package experiment

import (
	"errors"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
)

// Knob is one parameter a person can set with `--set name=value`, or move
// live in the TUI with its keys.
type Knob struct {
	Name string
	Help string // what it means and what is allowed
	// Live, when set, binds the knob to a pair of keys in the run view.
	Live *Live
	// Early knobs are applied before the other assignments of a command
	// line, because they change which keys exist (data=, sweep=).
	Early bool
	// Open, when set, makes the key usable on a scenario of any family:
	// assigning it there first switches to Open(seed), a scenario of the
	// knob's family (data= opens the data-file scenario of paper 003).
	Open func(seed uint64) Scenario
	// Refuse, when set, says why the knob cannot be set on a scenario (""
	// when it can): test= needs data= first, the local-size sweep derives
	// samples. Such a knob is left out of the keys an error lists, and
	// setting it is refused with that reason.
	Refuse func(sc Scenario) string
	// Prompt, when set, is what a view shows when it asks for the knob's
	// value as text (the data file of data=).
	Prompt *Prompt
	// Inert, when set, says why the knob's value changes nothing in a
	// scenario ("" when it acts): local_steps when every FedAvg racer pins
	// s, batch_norm without minibatches. A user who set it is told.
	Inert func(sc Scenario) string

	get func(*Scenario) string
	set func(*Scenario, string) error
}

// Get returns the knob's value in sc as text.
func (k Knob) Get(sc Scenario) string { return k.get(&sc) }

// Live is how the run view moves a knob: Down and Up are the keys (the first
// of each is shown), Name the short name in the key hints ("η"), Desc the
// help text, and Step returns the scenario one step down or up, or an
// *InputError saying why the step does nothing.
type Live struct {
	Down, Up   []string
	Name, Desc string
	Step       func(sc Scenario, up bool) (Scenario, error)
}

// NewKnob builds a knob on the whole scenario.
func NewKnob(name, help string, get func(*Scenario) string, set func(*Scenario, string) error) Knob {
	return Knob{Name: name, Help: help, get: get, set: set}
}

// TextKnob builds a knob of a family configuration C from its textual
// accessors; set's error says what is allowed.
func TextKnob[C any](name, help string, get func(*C) string, set func(*C, string) error) Knob {
	return Knob{Name: name, Help: help,
		get: func(s *Scenario) string { c := configOf[C](*s); return get(&c) },
		set: func(s *Scenario, v string) error {
			c := configOf[C](*s)
			if err := set(&c, v); err != nil {
				return err
			}
			s.Config = c
			return nil
		}}
}

// IntKnob is a whole-number field of C in lo..hi.
func IntKnob[C any](name, help string, lo, hi int, field func(*C) *int) Knob {
	return TextKnob(name, fmt.Sprintf("%s, a whole number in %d..%d", help, lo, hi),
		func(c *C) string { return strconv.Itoa(*field(c)) },
		func(c *C, v string) error { return parseInt(v, lo, hi, field(c)) })
}

// IntKnobOf is a whole-number field of the scenario itself in lo..hi.
func IntKnobOf(name, help string, lo, hi int, field func(*Scenario) *int) Knob {
	return NewKnob(name, fmt.Sprintf("%s, a whole number in %d..%d", help, lo, hi),
		func(s *Scenario) string { return strconv.Itoa(*field(s)) },
		func(s *Scenario, v string) error { return parseInt(v, lo, hi, field(s)) })
}

// valueError is a knob's refusal of a value: what is wrong with it and
// what the knob allows, written "reason; allowed: …" after key="value".
type valueError struct{ reason, allowed string }

func (e *valueError) Error() string { return e.reason + "; allowed: " + e.allowed }

func parseInt(v string, lo, hi int, dst *int) error {
	allowed := fmt.Sprintf("a whole number in %d..%d", lo, hi)
	n64, err := readWhole(v) // number.go: decimal only
	n := int(n64)
	switch {
	case errors.Is(err, strconv.ErrRange) && n > 0, err == nil && n > hi:
		return &valueError{"too large", allowed}
	case errors.Is(err, strconv.ErrRange), err == nil && n < lo:
		return &valueError{"too small", allowed}
	case err != nil:
		return &valueError{"not a whole number" + meant(v, true), allowed}
	}
	*dst = n
	return nil
}

// MinFloat is the smallest positive value a real-valued knob takes: below
// it lie numbers with which every computation of the papers underflows to
// 0 or overflows (1e-320 is subnormal).
const MinFloat = 1e-100

// FloatKnob is a real field of C in [MinFloat, MaxFloat], with 0 allowed
// too when zeroOK.
func FloatKnob[C any](name, help string, zeroOK bool, field func(*C) *float64) Knob {
	return FloatKnobMin(name, help, zeroOK, MinFloat, field)
}

// FloatKnobMin is FloatKnob with a larger smallest positive value lo (e.g.
// a separation that must stay visible next to the norm of the vectors it
// separates).
func FloatKnobMin[C any](name, help string, zeroOK bool, lo float64, field func(*C) *float64) Knob {
	allowed := "a number > 0"
	if lo > MinFloat {
		allowed = fmt.Sprintf("a number ≥ %g", lo)
	}
	if zeroOK {
		if lo > MinFloat {
			allowed = "0 or " + allowed
		} else {
			allowed = "a number ≥ 0"
		}
	}
	allowed += fmt.Sprintf(" and ≤ %g", MaxFloat)
	return TextKnob(name, fmt.Sprintf("%s, %s", help, allowed),
		func(c *C) string { return FormatFloat(*field(c)) },
		func(c *C, v string) error {
			x, err := readReal(v) // number.go: decimal only
			refuse := func(reason string) error { return &valueError{reason, allowed} }
			if err == nil && x == 0 && underflows(v) {
				err = strconv.ErrRange // ParseFloat rounds 1e-400 to 0 without saying so
			}
			switch {
			case err == nil && math.IsNaN(x):
				return refuse("NaN is not a number")
			case err == nil && math.IsInf(x, 0):
				return refuse("not a finite number")
			case errors.Is(err, strconv.ErrRange) && x != 0:
				return refuse("too large")
			case errors.Is(err, strconv.ErrRange):
				return refuse(fmt.Sprintf("too small (the smallest is %g)", lo))
			case err != nil:
				return refuse("not a number" + meant(v, false))
			case x > MaxFloat:
				return refuse("too large")
			case x < 0:
				return refuse("negative")
			case x == 0 && !zeroOK:
				return refuse("0 is not allowed")
			case x != 0 && x < lo:
				return refuse(fmt.Sprintf("too small (the smallest is %g)", lo))
			}
			*field(c) = x
			return nil
		})
}

// underflows reports whether a number that parsed as 0 has a digit other
// than 0 before its exponent, i.e. was too small for a float64.
func underflows(v string) bool {
	if i := strings.IndexAny(v, "eEpP"); i >= 0 {
		v = v[:i]
	}
	v = strings.TrimPrefix(strings.TrimPrefix(v, "0x"), "0X")
	return strings.ContainsAny(v, "123456789abcdefABCDEF")
}

// ChoiceKnob is a knob of C with a few named values: get names the value
// of c, set applies one of the choices (anything else is refused).
func ChoiceKnob[C any](name, help string, choices []string, get func(*C) string, set func(c *C, choice string)) Knob {
	return TextKnob(name, help, get, func(c *C, v string) error {
		if !slices.Contains(choices, v) {
			return fmt.Errorf("must be %s", orList(choices))
		}
		set(c, v)
		return nil
	})
}

// orList writes "a, b or c".
func orList(xs []string) string {
	if len(xs) < 2 {
		return strings.Join(xs, "")
	}
	return strings.Join(xs[:len(xs)-1], ", ") + " or " + xs[len(xs)-1]
}

// BoolKnob is a true/false field of C.
func BoolKnob[C any](name, help string, field func(*C) *bool) Knob {
	return TextKnob(name, help+": true or false",
		func(c *C) string { return strconv.FormatBool(*field(c)) },
		func(c *C, v string) error {
			b, err := strconv.ParseBool(v)
			if err != nil {
				return &valueError{"not true or false", "true or false"}
			}
			*field(c) = b
			return nil
		})
}

// WithLive returns the knob moved live by the given keys.
func (k Knob) WithLive(l Live) Knob { k.Live = &l; return k }

// WithInert returns the knob with its Inert rule.
func (k Knob) WithInert(f func(Scenario) string) Knob { k.Inert = f; return k }

// LadderStep is a Live.Step that moves a field of the configuration C along
// a ladder of nice values: to the next rung above (up) or below the current
// value, or nowhere at either end.
func LadderStep[C any, N ~int | ~float64](ladder []float64, field func(*C) *N) func(Scenario, bool) (Scenario, error) {
	return StepOf(func(_ Scenario, c *C, up bool) error {
		v := field(c)
		*v = N(StepLadder(ladder, float64(*v), up))
		return nil
	})
}

// StepOf is a Live.Step that moves the configuration C of a scenario: step
// changes c one step down or up, and its error (an *InputError) says why
// the step shows nothing; the scenario returned carries the change either
// way.
func StepOf[C any](step func(sc Scenario, c *C, up bool) error) func(Scenario, bool) (Scenario, error) {
	return func(sc Scenario, up bool) (Scenario, error) {
		c := configOf[C](sc)
		err := step(sc, &c, up)
		sc.Config = c
		return sc, err
	}
}

// StepLadder returns the next value above (up) or below the current one; a
// current value between rungs moves to the nearest rung in that direction.
// At either end it returns the current value.
func StepLadder(ladder []float64, cur float64, up bool) float64 {
	const tol = 1e-9
	if up {
		for _, v := range ladder {
			if v > cur*(1+tol)+tol {
				return v
			}
		}
		return cur
	}
	for i := len(ladder) - 1; i >= 0; i-- {
		if v := ladder[i]; v < cur*(1-tol)-tol {
			return v
		}
	}
	return cur
}

// Decades expands mantissas over 10^lo … 10^hi (a ladder of nice values).
func Decades(mantissas []float64, lo, hi int) []float64 {
	var out []float64
	for e := lo; e <= hi; e++ {
		for _, m := range mantissas {
			// Parse the decimal so that 1.5e-1 is the double nearest 0.15,
			// not 1.5·10⁻¹ rounded twice.
			v, _ := strconv.ParseFloat(strconv.FormatFloat(m, 'g', -1, 64)+"e"+strconv.Itoa(e), 64)
			out = append(out, v)
		}
	}
	return out
}

// SetKnob assigns a knob's value on sc (for knobs that wrap another knob's
// setter with a guard).
func SetKnob(k Knob, sc *Scenario, v string) error { return k.set(sc, v) }

// Cycle is a Live for a knob with a few named values: one key steps through
// them in turn (Down and Up are the same key).
func Cycle(knob, key, name, desc string, choices ...string) Live {
	return Live{Down: []string{key}, Up: []string{key}, Name: name, Desc: desc + " (" + strings.Join(choices, " → ") + ")",
		Step: func(sc Scenario, _ bool) (Scenario, error) {
			cur := sc.Get(knob)
			next := choices[0]
			for i, c := range choices {
				if c == cur {
					next = choices[(i+1)%len(choices)]
				}
			}
			err := sc.Set(knob, next)
			return sc, err
		}}
}

// meant is " (did you mean 0.1?)" when numberHint has a guess for v.
func meant(v string, whole bool) string {
	if h := numberHint(v, whole); h != "" {
		return " (did you mean " + h + "?)"
	}
	return ""
}
