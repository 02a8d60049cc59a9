package bound

import "github.com/fedscope/fedscope/experiment"

// Memory implements experiment.Computation (issue 13): the toy
// federation's rows (x1, x2, 1) and labels, M·n × (3+1), each client's
// Hessian and gradient constants (docs/papers.md §3.2), and the rows of the run
// table.
func (compute) Memory(sc experiment.Scenario, c Config) (uint64, string) {
	data := experiment.Floats(c.Clients, c.Samples, dim+1)
	stats := experiment.Floats(c.Clients, dim*dim+dim+1)
	table := experiment.Floats(max(len(c.Racers), 1), sc.Rounds, 12)
	total := experiment.SatAdd(data, stats, table)
	if table > data {
		return total, "rounds"
	}
	return total, "samples"
}

// InputFiles implements experiment.Computation: the family reads no files.
func (compute) InputFiles(experiment.Scenario, Config) []string { return nil }
