package newton

import (
	"context"
	"fmt"
	"runtime"

	"github.com/fedscope/fedscope/experiment"
)

// Memory estimates of paper 003's family (issue 13): every term is a
// float64 array Prepare or a racer allocates, sized from the knobs (or, for
// a data file, from the file once its rows and features are counted).

// ridgeSize is what the memory of a ridge problem in random-feature space
// depends on.
type ridgeSize struct {
	clients   int // m
	rows      int // |D|, training rows in all
	in        int // input dimension d (the largest feature index of a file)
	features  int // M, random features
	outputs   int // C: 1, or the number of classes
	testRows  int
	inputRows int // rows of the input data (training and test) held as d-vectors
	// equal is true when every client holds |D|/m rows (synthetic data
	// without a Dirichlet size split); otherwise the split is bounded.
	equal bool
}

// statistics returns the numbers model.NewRidge and the FedProx racers
// hold for the clients' and the pooled Hessians (docs/papers.md §4.1):
//   - when |D| ≥ M the pooled H is primal, and every client first forms
//     its M×M Gram matrix (all are alive until they are summed): m·M²;
//     a client with |D_j| < M also keeps Φ_j and its |D_j|² kernel factor;
//   - when |D| < M everything is dual: Φ_j and the kernel of every
//     client, and the pooled Φ (|D|×M) with its |D|² kernel;
//   - FedProx factors H_j + μI once more: M² or |D_j|² per client.
//
// With unequal clients the sums over j use Σ|D_j|·M ≤ |D|·M and
// Σ|D_j|² ≤ |D|², bounds that hold for any split.
func (s ridgeSize) statistics() (hessians, prox uint64) {
	m, M, N := s.clients, s.features, s.rows
	small := experiment.SatAdd(experiment.Floats(N, M), experiment.Floats(N, N)) // Σ over clients with |D_j| < M
	proxSmall := experiment.Floats(N, N)
	if s.equal && m > 0 {
		nj := N / m
		if nj >= M {
			small, proxSmall = 0, experiment.Floats(m, M, M)
		} else {
			small = experiment.Floats(m, nj, M+nj)
			proxSmall = experiment.Floats(m, nj, nj)
		}
	}
	if N >= M {
		hessians = experiment.SatAdd(experiment.Floats(m, M, M), small, experiment.Floats(M, M))
	} else {
		hessians = experiment.SatAdd(small, experiment.Floats(N, M), experiment.Floats(N, N))
	}
	prox = min(experiment.SatAdd(proxSmall), experiment.Floats(m, M, M))
	return hessians, prox
}

// bytes returns the estimate: the inputs (rows × d) and the feature map Ω
// (d × M); the statistics above; b_j, b, w_KRR and w_DKRR (M×C each); the
// test features (test rows × M); the racers' buffers; and per worker of
// the parallel loops one block of 256 feature rows.
func (s ridgeSize) bytes(racers int) uint64 {
	M, C := s.features, max(s.outputs, 1)
	hessians, prox := s.statistics()
	return experiment.SatAdd(
		experiment.Floats(s.inputRows, s.in+1),
		experiment.Floats(s.in, M),
		hessians, prox,
		experiment.Floats(s.clients+4, M, C),
		experiment.Floats(s.testRows, M),
		experiment.Floats(racers, 3, M+s.testRows, C),
		experiment.Floats(runtime.GOMAXPROCS(0), 256, M+C),
	)
}

// dominant names the knob that drives a synthetic estimate: the term of
// bytes that is largest — the input rows (samples, or test_size when the
// test set is the larger part), the clients' statistics (rff_dim when M is
// the larger factor of m·M², clients otherwise; samples for the dual
// statistics), the feature map (rff_dim), or the test features
// (test_size).
func (s ridgeSize) dominant(d Data) string {
	M := float64(s.features)
	rowsKnob := "samples"
	if d.TestSize > d.Clients*d.Samples {
		rowsKnob = "test_size"
	}
	hessians, prox := s.statistics()
	statsKnob := "samples"
	if s.rows >= s.features {
		statsKnob = "rff_dim"
		if s.clients > s.features {
			statsKnob = "clients"
		}
	}
	knob, most := rowsKnob, float64(s.inputRows)*float64(s.in+1)
	for _, t := range []struct {
		knob  string
		count float64
	}{
		{statsKnob, float64(hessians+prox) / 8},
		{"rff_dim", M*M + float64(s.in)*M},
		{"test_size", float64(s.testRows) * M},
	} {
		if t.count > most {
			knob, most = t.knob, t.count
		}
	}
	return knob
}

// Memory implements experiment.Computation. For a data file the rows
// and features are not known before the file is read; Prepare then checks
// them itself (fileCheck) before allocating, and this estimate covers only
// the feature map's part that the knobs fix.
func (compute) Memory(_ experiment.Scenario, c Config) (uint64, string) {
	d := c.Data
	racers := len(c.Racers)
	if d.DataPath != "" {
		s := ridgeSize{clients: d.Clients, rows: d.Clients, in: 1, features: d.RFFDim, outputs: 1}
		return s.bytes(racers), "rff_dim"
	}
	rows := d.Clients * d.Samples
	s := ridgeSize{clients: d.Clients, rows: rows, in: d.Dim, features: d.RFFDim, outputs: 1,
		testRows: d.TestSize, inputRows: rows + d.TestSize, equal: d.DirichletC == 0}
	return s.withNewton(c, s.bytes(racers)), s.dominant(d)
}

// withNewton adds to an estimate b the clients' statistics of a second
// problem when tuning may give the undamped FedNewton one of its own.
func (s ridgeSize) withNewton(c Config, b uint64) uint64 {
	if !c.Data.Tune || !undamped(c.Racers) {
		return b
	}
	hessians, _ := s.statistics()
	return experiment.SatAdd(b, hessians)
}

// fileCheck returns the check ReadFileContext calls once it has counted
// the rows and features of path, before allocating them. trainRows and
// trainDim are those of the training file when path is the test file (0
// while the training file itself is read); the outputs are taken as 1
// until the classes are known (checkFile is called again then).
func fileCheck(ctx context.Context, c Config, path string, trainRows, trainDim int) func(rows, dim int) error {
	return func(rows, dim int) error {
		d := c.Data
		train, test := rows, 0
		switch {
		case trainRows > 0: // the test file
			train, test = trainRows, rows
		case d.TestPath == "": // a hold-out split of this file
			test = int(float64(rows)*d.Holdout) + 1
		}
		return checkFile(ctx, c, fmt.Sprintf("%q (%d rows × %d features)", path, rows, dim), train, test, max(dim, trainDim), 1)
	}
}

// checkFile refuses a data-file run whose ridge problem would not fit in
// the memory available: the rows (held twice: as read and dealt to the
// clients), the feature map from dim inputs, the statistics of the clients
// and the test features, with the given number of outputs. what names the
// file in the message.
func checkFile(ctx context.Context, c Config, what string, train, test, dim, classes int) error {
	d := c.Data
	s := ridgeSize{clients: d.Clients, rows: train, in: dim, features: d.RFFDim, outputs: classes,
		testRows: test, inputRows: 2 * (train + test)}
	if classes > 1 {
		what += fmt.Sprintf(" with %d classes", classes)
	}
	return experiment.CheckMemory(ctx, s.withNewton(c, s.bytes(len(c.Racers))), fmt.Sprintf("data=%s, rff_dim=%d:", what, d.RFFDim))
}

// InputFiles implements experiment.Computation: the data file and the test
// file a run reads.
func (compute) InputFiles(_ experiment.Scenario, c Config) []string {
	d := c.Data
	var out []string
	for _, p := range []string{d.DataPath, d.TestPath} {
		if p != "" {
			out = append(out, p)
		}
	}
	return out
}
