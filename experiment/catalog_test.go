package experiment_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/fedscope/fedscope/experiment"
)

// TestCatalogSetNamesOwners: a key the scenario lacks is refused with an
// *InputError naming every other preset that has it — of its own family
// too, whose sweeps have keys its runs lack — and saying when the scenario
// is not a sweep while every owner is.
func TestCatalogSetNamesOwners(t *testing.T) {
	sc := scenario(t, "paradox")
	err := linearCatalog.Set(&sc, "fed_error", "min")
	var ie *experiment.InputError
	if !errors.As(err, &ie) {
		t.Fatalf("Set(fed_error) on paradox = %v, want an *InputError", err)
	}
	for _, want := range []string{`"fed_error"`, `"min"`, "fedgain-model, fedgain-covariate, polynomial preset(s)", "not to paradox, which is not a sweep"} {
		if !strings.Contains(ie.Msg, want) {
			t.Errorf("message %q does not mention %q", ie.Msg, want)
		}
	}
	// gamma exists on runs and sweeps: no "not a sweep".
	sc = scenario(t, "polynomial")
	if err := linearCatalog.Set(&sc, "gamma", "1"); err == nil || !strings.Contains(err.Error(), "paradox, minibatch, fedgain-model, fedgain-covariate preset(s), not to polynomial;") {
		t.Errorf("Set(gamma) on polynomial = %v", err)
	}
	if err := linearCatalog.Set(&sc, "nosuchknob", "1"); err == nil || !strings.Contains(err.Error(), "unknown key") {
		t.Errorf("Set(nosuchknob) = %v", err)
	}
}
