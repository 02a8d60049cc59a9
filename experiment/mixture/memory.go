package mixture

import (
	"runtime"

	"github.com/fedscope/fedscope/experiment"
)

// Memory implements experiment.Computation (issue 13): the float64
// arrays of the population and of the two racers (docs/papers.md §5.2–§5.4),
// with the Phase-2 client sizes drawn exactly as the generator draws them
// (Mixture.LabelsAndSizes, k·M draws, no data):
//   - the Phase-2 clients' rows, Σ n_i × (d+1), the anchors' points and
//     the Phase-1 pool of 2-point clients;
//   - per Phase-2 client with n_i ≥ d its Gram matrix d², and with
//     local=fedprox its proximal factor (d², or n_i² when n_i < d), per racer;
//   - per anchor FedMD's d×d moment matrix and its d×k blocks;
//   - per racer its models u_i (M × d) and, per round, the clients'
//     cluster assignment kept for the cluster view and the JSON lines.
func (compute) Memory(sc experiment.Scenario, c Config) (uint64, string) {
	g := c.data(sc.Seed)
	d := g.Dim
	_, sizes := g.LabelsAndSizes(sc.Seed)
	var rows, gram, prox int
	for _, n := range sizes {
		rows += n
		if n >= d {
			gram++
			prox += d * d
		} else {
			prox += n * n
		}
	}
	phase2 := experiment.Floats(rows, d+1)
	anchorData := experiment.Floats(g.Anchors, g.AnchorPoints, d+1)
	pool := experiment.Floats(2, g.PoolClients, d+1)
	data := experiment.SatAdd(phase2, anchorData, pool)
	stats := experiment.Floats(gram, d, d)
	if c.Prox {
		stats = experiment.SatAdd(stats, experiment.Floats(2, prox))
	}
	anchors := experiment.Floats(g.Anchors, d*d+3*d*g.K)
	racers := experiment.SatAdd(experiment.Floats(2, c.Clients, d), experiment.Floats(runtime.GOMAXPROCS(0), d+c.MaxSamples))
	assign := experiment.Floats(2, sc.Rounds, c.Clients+8)
	total := experiment.SatAdd(data, stats, anchors, racers, assign)
	knob, most := "clients", max(phase2, assign)
	for _, t := range []struct {
		knob  string
		bytes uint64
	}{{"dim", stats}, {"anchors", anchors}, {"anchor_pairs", anchorData}, {"pool", pool}} {
		if t.bytes > most {
			knob, most = t.knob, t.bytes
		}
	}
	return total, knob
}

// InputFiles implements experiment.Computation: the family reads no files.
func (compute) InputFiles(experiment.Scenario, Config) []string { return nil }
