package lowrank

import (
	"testing"

	"github.com/fedscope/fedscope/experiment"
	"github.com/fedscope/fedscope/experiment/guardtest"
)

func TestMemoryGuard(t *testing.T) {
	sc, err := experiment.NewCatalog(Family).Apply(lowRank(), []string{"rounds=3", "clients=10", "samples=20"})
	if err != nil {
		t.Fatal(err)
	}
	sc.Preset = "lowrank"
	guardtest.Run(t, sc)
}

// TestMemoryGrowsWithRank checks the FedLRGD term: p = d+1 matrices of
// r×r for a rank-r racer, so doubling every rank quadruples it.
func TestMemoryGrowsWithRank(t *testing.T) {
	sc := lowRank()
	experiment.Update(&sc, func(c *Config) {
		c.Racers = []experiment.RacerSpec{{Kind: KindFedLRGD, Opts: []experiment.RacerOpt{{Key: "r", Value: 100}}}}
		c.Clients, c.Samples = 1, 1
	})
	small, _ := Family.Memory(sc)
	experiment.Update(&sc, func(c *Config) { c.Racers[0].Opts[0].Value = 200 })
	large, knob := Family.Memory(sc)
	if knob != "rank" || float64(large) < 3.5*float64(small) {
		t.Errorf("rank 100: %d bytes, rank 200: %d bytes (knob %s); want about 4× and knob rank", small, large, knob)
	}
}
