package bound

import (
	"testing"

	"github.com/fedscope/fedscope/experiment"
	"github.com/fedscope/fedscope/experiment/guardtest"
)

func TestMemoryGuard(t *testing.T) {
	sc, err := experiment.NewCatalog(Family).Apply(fedavgBound(), []string{"rounds=3", "clients=4", "samples=30"})
	if err != nil {
		t.Fatal(err)
	}
	sc.Preset = "fedavg-bound"
	guardtest.Run(t, sc)
	// 1000 clients × 100000 points × 4 numbers: 3.2 GB of data.
	experiment.Update(&sc, func(c *Config) { c.Clients, c.Samples = 1000, 100_000 })
	if need, knob := Family.Memory(sc); need < 3_200_000_000 || knob != "samples" {
		t.Errorf("the largest federation: %d bytes (knob %s), want at least 3.2 GB and knob samples", need, knob)
	}
}
