package mixture

import (
	"testing"

	"github.com/fedscope/fedscope/experiment"
	"github.com/fedscope/fedscope/experiment/guardtest"
)

func TestMemoryGuard(t *testing.T) {
	sc, err := experiment.NewCatalog(Family).Apply(mixture(), []string{"rounds=14", "clients=50", "pool=200", "anchors=4", "anchor_pairs=10"})
	if err != nil {
		t.Fatal(err)
	}
	sc.Preset = "mixture"
	guardtest.Run(t, sc)
}

// TestMemoryCountsAnchors checks the FedMD term: every anchor keeps a d×d
// moment matrix, 1000 anchors in d = 2000 some 32 GB.
func TestMemoryCountsAnchors(t *testing.T) {
	sc := mixture()
	experiment.Update(&sc, func(c *Config) { c.Anchors, c.Dim, c.Clients, c.Pool, c.Pairs = 1000, 2000, 10, 1, 1 })
	need, knob := Family.Memory(sc)
	if need < 1000*2000*2000*8 || knob != "anchors" {
		t.Errorf("1000 anchors in d=2000: %d bytes (knob %s), want at least 32 GB and knob anchors", need, knob)
	}
}
