package experiment

import (
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
)

// One reading of numbers for every input of fedscope: the values of --set,
// the command line's flags (--rounds, --seed, --trials, --shard, --pace)
// and the options of a racer (fedavg:s=5:eta=0.1) all go through the
// functions of this file, so that a number means the same wherever it is
// written. Numbers are decimal: a whole number is digits with an optional
// sign ("010" is ten), a real number is written as in "0.05", ".5" or
// "5e-2". Hexadecimal, octal and binary forms ("0x10", "0o17", "0b11"),
// digit separators ("1_000") and hexadecimal floats ("0x1p-3") are not
// numbers here; the refusal guesses what was meant where it can (numberHint).
// Surrounding spaces are the caller's to trim (--set and the flags do).

// readWhole reads a decimal whole number with an optional sign. Its errors
// are those of strconv: ErrSyntax for anything but digits, ErrRange (with
// the saturated value, whose sign tells the direction) beyond int64.
func readWhole(v string) (int64, error) {
	return strconv.ParseInt(v, 10, 64) // base 10: no prefixes, no underscores
}

// readReal reads a decimal real number (or the words NaN and Inf, which the
// callers refuse with their own reason). Its errors are those of
// strconv.ParseFloat; a hexadecimal float is ErrSyntax.
func readReal(v string) (float64, error) {
	if !decimalReal(v) && !nonFinite(v) {
		return 0, &strconv.NumError{Func: "ParseFloat", Num: v, Err: strconv.ErrSyntax}
	}
	return strconv.ParseFloat(v, 64)
}

// decimalReal reports whether v is [+-] (digits [. [digits]] | . digits)
// [(e|E) [+-] digits].
func decimalReal(v string) bool {
	i := 0
	if i < len(v) && (v[i] == '+' || v[i] == '-') {
		i++
	}
	digits := func() int {
		n := 0
		for i < len(v) && v[i] >= '0' && v[i] <= '9' {
			i++
			n++
		}
		return n
	}
	n := digits()
	if i < len(v) && v[i] == '.' {
		i++
		n += digits()
	}
	if n == 0 {
		return false
	}
	if i < len(v) && (v[i] == 'e' || v[i] == 'E') {
		i++
		if i < len(v) && (v[i] == '+' || v[i] == '-') {
			i++
		}
		if digits() == 0 {
			return false
		}
	}
	return i == len(v)
}

// nonFinite reports whether v spells NaN or an infinity as ParseFloat
// reads them ("NaN", "Inf", "+inf", "-Infinity").
func nonFinite(v string) bool {
	w := strings.ToLower(strings.TrimLeft(v, "+-"))
	return len(v)-len(w) <= 1 && (w == "nan" || w == "inf" || w == "infinity")
}

// ParseWhole reads v as a whole number in lo..hi, as every whole-number
// key of --set does. The error says what is wrong and what is allowed:
// "too large; allowed: a whole number in 1..100000".
func ParseWhole(v string, lo, hi int) (int, error) {
	var n int
	err := parseInt(v, lo, hi, &n)
	return n, err
}

// ParseSeed reads a master seed: a whole number in 0..2⁶⁴−1.
func ParseSeed(v string) (uint64, error) {
	allowed := fmt.Sprintf("a whole number ≥ 0 (up to %d)", uint64(math.MaxUint64))
	w := strings.TrimPrefix(v, "+") // a sign, as ParseInt takes it
	n, err := strconv.ParseUint(w, 10, 64)
	if strings.HasPrefix(w, "+") {
		err = strconv.ErrSyntax
	}
	switch {
	case err == nil:
		return n, nil
	case strings.HasPrefix(v, "-") && decimalWhole(v[1:]):
		return 0, &valueError{"negative", allowed}
	case decimalWhole(w):
		return 0, &valueError{"too large", allowed}
	}
	return 0, &valueError{"not a whole number ≥ 0" + meant(v, true), allowed}
}

// decimalWhole reports whether v is one or more decimal digits.
func decimalWhole(v string) bool {
	return v != "" && strings.Trim(v, "0123456789") == ""
}

// ParseReal reads v as a real number x with lo < x ≤ hi (lo ≤ x ≤ hi when
// closed), as the racer option eta and the flag --pace do; allowed is how
// the error words the range. The reasons are those of the real-valued keys
// of --set.
func ParseReal(v string, lo, hi float64, closed bool, allowed string) (float64, error) {
	x, err := readReal(v)
	refuse := func(reason string) error { return &valueError{reason, allowed} }
	switch {
	case err == nil && math.IsNaN(x):
		return 0, refuse("NaN is not a number")
	case err == nil && math.IsInf(x, 0):
		return 0, refuse("not a finite number")
	case errors.Is(err, strconv.ErrRange) && x != 0:
		return 0, refuse("too large")
	case errors.Is(err, strconv.ErrRange):
		return 0, refuse("too small")
	case err != nil:
		return 0, refuse("not a number" + meant(v, false))
	case x > hi:
		return 0, refuse("too large")
	case x < lo || (x == lo && !closed):
		return 0, refuse("too small")
	}
	return x, nil
}
