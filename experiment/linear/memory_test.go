package linear

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/fedscope/fedscope/experiment"
	"github.com/fedscope/fedscope/experiment/guardtest"
)

func TestMemoryGuard(t *testing.T) {
	guardtest.Run(t, preset(t, "paradox", "rounds=3", "clients=5", "samples=50", "dim=20"))
	sc := preset(t, "polynomial", "trials=2")
	sc.Sweep.Grid = sc.Sweep.Grid[:3]
	guardtest.Sweep(t, sc)
}

// TestMemoryOfLargeFederation checks the estimate where the data limit
// (clients × samples × dim ≤ 5·10⁷ numbers) does not see the cost: 10
// clients with 2000 samples in d = 2000 hold 4·10⁷ numbers of data, but
// each also a Gram matrix, its eigenvectors and a proximal factor of 2000²
// numbers — 960 MB more. Two samples per client keep no Gram matrix.
func TestMemoryOfLargeFederation(t *testing.T) {
	sc := preset(t, "paradox", "clients=10000", "dim=2000", "samples=2")
	need, knob := Family.Memory(sc)
	if need > 16<<30 || knob != "clients" {
		t.Errorf("2 samples per client (no Gram matrices): estimate %d bytes (knob %s), want well under 16 GB and the 10000 clients named", need, knob)
	}
	sc = preset(t, "paradox", "clients=10", "dim=2000", "samples=2000")
	need, knob = Family.Memory(sc)
	// 10 clients × 3 × 2000² × 8 bytes of statistics alone.
	if want := uint64(10 * 3 * 2000 * 2000 * 8); need < want || knob != "dim" {
		t.Errorf("estimate %d bytes (knob %s), want at least %d and knob dim", need, knob, want)
	}
	_, err := experiment.NewEngine().Run(experiment.WithMemory(context.Background(), 500<<20), sc, experiment.Observer{})
	var ie *experiment.InputError
	if !errors.As(err, &ie) || !strings.HasPrefix(err.Error(), "dim=2000: ") {
		t.Errorf("with 500 MB available: err = %v, want a refusal naming dim=2000", err)
	}
}

// TestMemoryNamesBatch: a minibatch's B×B kernel is the racers' largest
// cost when B is large, and the refusal names the key that sets it: batch,
// or algorithms when a racer pins b (issue 22: it named samples).
func TestMemoryNamesBatch(t *testing.T) {
	base := []string{"rounds=1", "clients=1", "dim=1", "samples=1000000"}
	for _, test := range []struct {
		set, knob, prefix string
	}{
		{"batch=1000000", "batch", "batch=1000000: "},
		{"algorithms=fedavg:b=1000000,fedprox", "algorithms", "algorithms=fedavg:b=1000000,fedprox: "},
	} {
		sc := preset(t, "paradox", append(base, test.set)...)
		need, knob := Family.Memory(sc)
		if need < 8e12 || knob != test.knob {
			t.Errorf("%s: estimate %d bytes, knob %s; want at least 8 TB (a 10⁶×10⁶ kernel) and %s", test.set, need, knob, test.knob)
		}
		_, err := experiment.NewEngine().Run(experiment.WithMemory(context.Background(), 1<<30), sc, experiment.Observer{})
		var ie *experiment.InputError
		if !errors.As(err, &ie) || !strings.HasPrefix(err.Error(), test.prefix) || !strings.HasSuffix(err.Error(), "lower "+test.knob) {
			t.Errorf("%s with 1 GB available: err = %v, want a refusal naming %s", test.set, err, test.knob)
		}
	}
	// Without a minibatch the same federation is named by its data.
	if _, knob := Family.Memory(preset(t, "paradox", base...)); knob != "samples" {
		t.Errorf("full batch: knob %s, want samples", knob)
	}
}
