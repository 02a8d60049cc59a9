package experiment

import "testing"

// TestSuggest is a table of typos people make and what they meant, and of
// words that must not get a (misleading) suggestion.
func TestSuggest(t *testing.T) {
	presets := []string{"paradox", "minibatch", "fedgain-model", "fedgain-covariate", "polynomial", "lowrank",
		"fedavg-bound", "newton-rounds", "newton-local-size", "newton-heterogeneity", "mixture"}
	keys := []string{"eta", "local_steps", "batch", "batch_norm", "clients", "dim", "samples", "noise", "gamma", "subspace_dim", "algorithms", "rounds", "seed"}
	for _, test := range []struct {
		word  string
		among []string
		want  string
	}{
		{"paradx", presets, "paradox"},
		{"Paradox", presets, "paradox"},
		{"paradoxx", presets, "paradox"},
		{"pardaox", presets, "paradox"}, // two swaps: distance 2 on a long word
		{"minibach", presets, "minibatch"},
		{"mixtrue", presets, "mixture"},
		{"low", presets, "lowrank"},                // the only preset it begins
		{"newton", presets, ""},                    // begins three: no guess
		{"fedgain", presets, ""},                   // begins two
		{"newton-round", presets, "newton-rounds"}, // prefix
		{"etta", keys, "eta"},
		{"ETA", keys, "eta"},
		{"clinets", keys, "clients"},
		{"sead", keys, "seed"},
		{"local-steps", keys, "local_steps"},
		{"eps", keys, ""}, // not "eta": one letter of three is too much
		{"zzzz", keys, ""},
		{"", keys, ""},
		{"rnu", []string{"presets", "run", "sweep", "help", "version"}, "run"},
		{"swep", []string{"presets", "run", "sweep", "help", "version"}, "sweep"},
		{"prest", []string{"format", "out", "preset", "rounds", "seed", "set"}, "preset"},
	} {
		if got := Suggest(test.word, test.among); got != test.want {
			t.Errorf("Suggest(%q) = %q, want %q", test.word, got, test.want)
		}
	}
}

// TestEditDistance checks the distance against values worked out by hand.
func TestEditDistance(t *testing.T) {
	for _, test := range []struct {
		a, b string
		want int
	}{
		{"", "", 0}, {"a", "", 1}, {"", "abc", 3}, {"kitten", "sitting", 3}, {"rnu", "run", 1},
		{"ab", "ba", 1}, {"ca", "abc", 3}, {"paradox", "paradox", 0}, {"η", "n", 1},
	} {
		if got := editDistance(test.a, test.b); got != test.want {
			t.Errorf("editDistance(%q, %q) = %d, want %d", test.a, test.b, got, test.want)
		}
		if got := editDistance(test.b, test.a); got != test.want {
			t.Errorf("editDistance(%q, %q) = %d, want %d (symmetric)", test.b, test.a, got, test.want)
		}
	}
}

// TestNumberHint checks the guesses for numbers written the way some
// locales and people write them.
func TestNumberHint(t *testing.T) {
	for _, test := range []struct {
		v     string
		whole bool
		want  string
	}{
		{"0,1", false, "0.1"}, {"1,5e-3", false, "1.5e-3"}, {"1_000.5", false, "1000.5"},
		{"1,000", true, "1000"}, {"1_000", true, "1000"}, {"1e3", true, "1000"}, {"2.0", true, "2"},
		{"1,2,3", false, ""}, {"abc", false, ""}, {"2.5", true, ""}, {"0.1", false, ""}, {"1.000,5", false, ""},
	} {
		if got := numberHint(test.v, test.whole); got != test.want {
			t.Errorf("numberHint(%q, %v) = %q, want %q", test.v, test.whole, got, test.want)
		}
	}
}
