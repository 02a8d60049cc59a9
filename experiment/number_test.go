package experiment

import (
	"strings"
	"testing"
)

// TestParseWhole: decimal digits with an optional sign, nothing else.
func TestParseWhole(t *testing.T) {
	for _, test := range []struct {
		v    string
		want int
		why  string // "" when accepted, else in the message
	}{
		{"10", 10, ""}, {"010", 10, ""}, {"+10", 10, ""}, {"0", 0, ""}, {"-0", 0, ""},
		{"0x10", 0, "not a whole number"}, {"0b11", 0, "not a whole number"}, {"0o17", 0, "not a whole number"},
		{"1_0", 0, "did you mean 10?"}, {"1e3", 0, "did you mean 1000?"}, {"2.0", 0, "did you mean 2?"},
		{" 10", 0, "not a whole number"}, {"", 0, "not a whole number"}, {"-1", 0, "too small"},
		{"101", 0, "too large"}, {"9223372036854775808", 0, "too large"}, {"-9223372036854775809", 0, "too small"},
	} {
		n, err := ParseWhole(test.v, 0, 100)
		switch {
		case test.why == "" && (err != nil || n != test.want):
			t.Errorf("ParseWhole(%q) = %d, %v; want %d", test.v, n, err, test.want)
		case test.why != "" && (err == nil || !strings.Contains(err.Error(), test.why) || !strings.Contains(err.Error(), "0..100")):
			t.Errorf("ParseWhole(%q) = %d, %v; want a refusal with %q and the range", test.v, n, err, test.why)
		}
	}
}

// TestParseSeed covers the whole range of a seed, 0..2⁶⁴−1.
func TestParseSeed(t *testing.T) {
	for v, want := range map[string]uint64{"0": 0, "007": 7, "+1": 1, "18446744073709551615": 1<<64 - 1} {
		if n, err := ParseSeed(v); err != nil || n != want {
			t.Errorf("ParseSeed(%q) = %d, %v; want %d", v, n, err, want)
		}
	}
	for v, why := range map[string]string{"-1": "negative", "18446744073709551616": "too large", "0x10": "not a whole number",
		"1_0": "did you mean 10?", "": "not a whole number", "-x": "not a whole number", "++1": "not a whole number", "+-1": "not a whole number"} {
		if _, err := ParseSeed(v); err == nil || !strings.Contains(err.Error(), why) {
			t.Errorf("ParseSeed(%q): %v, want a refusal with %q", v, err, why)
		}
	}
}

// TestParseReal: decimal numbers only; NaN, infinities, hexadecimal floats
// and digit separators refused, each with its reason.
func TestParseReal(t *testing.T) {
	for v, want := range map[string]float64{"0.5": 0.5, ".5": 0.5, "5.": 5, "5e-1": 0.5, "+5E-1": 0.5, "1e6": 1e6} {
		if x, err := ParseReal(v, 0, 1e6, false, "a number > 0"); err != nil || x != want {
			t.Errorf("ParseReal(%q) = %g, %v; want %g", v, x, err, want)
		}
	}
	for v, why := range map[string]string{"NaN": "NaN is not a number", "Inf": "not a finite number", "-infinity": "not a finite number",
		"0x1p-3": "not a number", "1_000.5": "did you mean 1000.5?", "0,5": "did you mean 0.5?", "e5": "not a number",
		".": "not a number", "1e": "not a number", "0": "too small", "-1": "too small", "1e7": "too large",
		"1e400": "too large", "1e-400": "too small", "++1": "not a number", "Infx": "not a number"} {
		if _, err := ParseReal(v, 0, 1e6, false, "a number > 0"); err == nil || !strings.Contains(err.Error(), why) ||
			!strings.Contains(err.Error(), "allowed: a number > 0") {
			t.Errorf("ParseReal(%q): %v, want a refusal with %q", v, err, why)
		}
	}
	if x, err := ParseReal("0", 0, 1, true, "a number in [0, 1]"); err != nil || x != 0 {
		t.Errorf("closed range: ParseReal(0) = %g, %v", x, err)
	}
}
