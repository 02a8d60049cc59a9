package linear

import (
	"runtime"

	"github.com/fedscope/fedscope/experiment"
)

// Memory implements experiment.Computation (issue 13): the float64
// arrays of model.NewProblem and of the racers for the scenario's
// federation (docs/papers.md §1.2 for the statistics):
//   - the design and responses, N × (d+1), and the clients' truths;
//   - per client with n_i ≥ d its Gram matrix X_iᵀX_i/n_i, and as much
//     again for its eigenvectors (full-batch FedAvg with s ≥ 2, FedProx)
//     and for its proximal factor (FedProx): 3d²;
//   - per client with n_i < d its n_i×n_i kernel matrix and proximal
//     factor: 2n_i²;
//   - the pooled Gram matrix and the least-squares solve (Cholesky, or an
//     SVD with its two factors): 6d²;
//   - per worker of the parallel loops the eigensolver's scratch, 3d²;
//   - per racer its workspace (d, the sample permutations), a minibatch
//     racer's B×B kernel, and the rows of the run table.
func (compute) Memory(sc experiment.Scenario, c Config) (uint64, string) {
	d := c.Data
	dim := d.Dim
	var gramClients, rawSquares int
	for i := 0; i < d.Clients; i++ {
		if n := d.SamplesOf(i); n >= dim {
			gramClients++
		} else {
			rawSquares += n * n
		}
	}
	n := d.TotalSamples()
	racers := max(len(c.Racers), 1)
	data := experiment.SatAdd(experiment.Floats(n, dim+1), experiment.Floats(d.Clients, dim))
	grams := experiment.Floats(3, gramClients, dim, dim)
	raw := experiment.Floats(2, rawSquares)
	pooled := experiment.Floats(6+3*runtime.GOMAXPROCS(0), dim, dim)
	perRacer := experiment.Floats(racers, n+4*dim)
	// Each minibatch racer's B×B kernel (model.NewWorkspace), with its own
	// B when it pins b; the largest B names the knob when they dominate.
	var batches uint64
	batchKnob, largest := "batch", 0
	for _, r := range resolve(c) {
		batches = experiment.SatAdd(batches, experiment.Floats(r.batch, r.batch))
		if r.batch > largest {
			largest = r.batch
			if _, pinned := r.spec.Opt("b"); pinned && r.batch != c.Batch {
				batchKnob = "algorithms"
			} else {
				batchKnob = "batch"
			}
		}
	}
	table := experiment.Floats(racers, sc.Rounds, 12)
	total := experiment.SatAdd(data, grams, raw, pooled, perRacer, batches, table)
	// The data: N = M × n_i rows; the larger factor is the one to lower.
	knob := "samples"
	if d.Clients > d.Samples {
		knob = "clients"
	}
	switch {
	case batches > data && batches > grams && batches > raw && batches > table:
		knob = batchKnob
	case grams >= data && grams >= raw && grams >= table:
		knob = "dim"
		if gramClients > dim {
			knob = "clients"
		}
	case table > data && table > raw:
		knob = "rounds"
	}
	return total, knob
}

// InputFiles implements experiment.Computation: the family reads no files.
func (compute) InputFiles(experiment.Scenario, Config) []string { return nil }
