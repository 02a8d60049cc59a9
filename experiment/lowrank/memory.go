package lowrank

import (
	"github.com/fedscope/fedscope/experiment"
)

// Memory implements experiment.Computation (issue 13): the float64
// arrays of the soft-label data and of the racers (docs/papers.md §2.3):
//   - the samples (x, y) of the clients and of the server, (m·s + r) ×
//     (d+1), with a slice header per client;
//   - per FedLRGD racer of rank r, for each of the p parameters, the r×r
//     matrix G⁽ⁱ⁾ of gradients at the anchors, its pseudo-inverse and the
//     SVD factors that make it: about 5·p·r²;
//   - per racer the rows of the run table.
func (compute) Memory(sc experiment.Scenario, c Config) (uint64, string) {
	s := softLabels(c)
	p := c.Dim + 1
	data := experiment.SatAdd(experiment.Floats(s.Clients*s.Samples+s.Server, s.Dim+1), experiment.Floats(s.Clients, 8))
	var lrgd uint64
	rs := resolve(c)
	for _, r := range rs {
		if r.spec.Kind == KindFedLRGD {
			lrgd = experiment.SatAdd(lrgd, experiment.Floats(5, p, r.rank, r.rank))
		}
	}
	table := experiment.Floats(len(rs), sc.Rounds, 12)
	total := experiment.SatAdd(data, lrgd, table)
	switch {
	case lrgd > data && lrgd > table:
		return total, "rank"
	case table > data:
		return total, "rounds"
	}
	return total, "samples"
}

// InputFiles implements experiment.Computation: the family reads no files.
func (compute) InputFiles(experiment.Scenario, Config) []string { return nil }
