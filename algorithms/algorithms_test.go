package algorithms_test

import (
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/fedscope/fedscope/algorithms"
	"github.com/fedscope/fedscope/datasets"
	"github.com/fedscope/fedscope/model"
	"gonum.org/v1/gonum/floats"
	"gonum.org/v1/gonum/floats/scalar"
)

// TestFedAvgS1IsGD checks that FedAvg with one full-batch local step is
// centralised gradient descent on the pooled data with the same step
// (docs/papers.md §1.3): Σ_i (n_i/N)(θ − (η/n_i)X_iᵀ(X_iθ − y_i)) = θ − (η/N)Xᵀ(Xθ − y).
// The reference iterates on the stacked raw design.
func TestFedAvgS1IsGD(t *testing.T) {
	const (
		tol    = 1e-12
		rounds = 40
	)
	for i, test := range []struct {
		cfg datasets.Linear
		eta float64
	}{
		{cfg: datasets.Linear{Clients: 5, Dim: 8, Samples: 30, Noise: 0.5}, eta: 0.1},
		// Unbalanced: two data-scarce clients.
		{cfg: datasets.Linear{Clients: 5, Dim: 10, Samples: 60, Noise: 0.5, ScarceClients: 2, ScarceSamples: 12}, eta: 0.2},
		// n_i < d for every client: raw-design clients, no Gram matrix.
		{cfg: datasets.Linear{Clients: 5, Dim: 20, Samples: 8, Noise: 0.5, ScarceClients: 3, ScarceSamples: 3, Gamma: 1}, eta: 0.1},
	} {
		p := newProblem(t, test.cfg, uint64(i)+1)
		if i == 2 {
			for j := range p.Clients {
				if p.Clients[j].Gram != nil {
					t.Fatalf("case %d: client %d keeps a Gram matrix; want raw clients", i, j)
				}
			}
		}
		pool := stacked(p.Fed)
		got, err := run(algorithms.FedAvg{Eta: test.eta, LocalSteps: 1}, p, rounds)
		if err != nil || len(got) != rounds {
			t.Fatalf("case %d: %d rounds, err %v", i, len(got), err)
		}
		theta := make([]float64, p.Dim)
		for t0, r := range got {
			theta = pool.gd(theta, test.eta, 1)
			if r.Index != t0+1 {
				t.Errorf("case %d: round %d has Index %d", i, t0+1, r.Index)
			}
			if !within(r.Theta, theta, tol) {
				t.Errorf("case %d round %d: θ = %v, want centralised GD %v", i, r.Index, r.Theta, theta)
				break
			}
			if want := pool.gradNorm(theta); !scalar.EqualWithinAbsOrRel(r.GradNorm, want, 1e-10, 1e-10) {
				t.Errorf("case %d round %d: GradNorm = %v, want %v", i, r.Index, r.GradNorm, want)
			}
			if want := floats.Distance(theta, p.Fed.Truth, 2); !scalar.EqualWithinAbsOrRel(r.EstError, want, 1e-10, 1e-10) {
				t.Errorf("case %d round %d: EstError = %v, want %v", i, r.Index, r.EstError, want)
			}
		}
	}
}

// TestFedAvgRounds checks FedAvg with s > 1 local steps against the
// protocol of docs/papers.md §1.3 run on the raw designs: every client takes s
// gradient steps from θ_{t−1}, the server averages with n_i/N.
func TestFedAvgRounds(t *testing.T) {
	const rounds = 15
	for i, test := range []struct {
		cfg datasets.Linear
		eta float64
		s   int
	}{
		{cfg: datasets.Linear{Clients: 5, Dim: 8, Samples: 30, Noise: 0.5, Gamma: 2}, eta: 0.1, s: 5},
		{cfg: datasets.Linear{Clients: 4, Dim: 15, Samples: 40, Noise: 0.5, ScarceClients: 2, ScarceSamples: 6}, eta: 0.05, s: 10},
	} {
		p := newProblem(t, test.cfg, 3)
		cs := clients(p.Fed)
		got, err := run(algorithms.FedAvg{Eta: test.eta, LocalSteps: test.s}, p, rounds)
		if err != nil {
			t.Fatalf("case %d: %v", i, err)
		}
		theta := make([]float64, p.Dim)
		for _, r := range got {
			theta = average(cs, theta, func(c client, th []float64) []float64 { return c.gd(th, test.eta, test.s) })
			if !within(r.Theta, theta, 1e-12) {
				t.Errorf("case %d round %d: θ = %v, want %v", i, r.Index, r.Theta, theta)
				break
			}
		}
	}
}

// TestFedProxRound checks that a FedProx round is Σ_i w_i prox_i(θ_{t−1})
// with prox_i solved independently by LU on the raw design (docs/papers.md §1.4),
// for Gram clients (n_i ≥ d) and Woodbury clients (n_i < d).
func TestFedProxRound(t *testing.T) {
	const (
		tol    = 1e-10
		rounds = 10
	)
	for i, test := range []struct {
		cfg datasets.Linear
		eta float64
	}{
		{cfg: datasets.Linear{Clients: 5, Dim: 8, Samples: 30, Noise: 0.5}, eta: 0.1},
		{cfg: datasets.Linear{Clients: 5, Dim: 12, Samples: 40, Noise: 0.5, ScarceClients: 3, ScarceSamples: 5, Gamma: 1}, eta: 0.5},
		{cfg: datasets.Linear{Clients: 4, Dim: 20, Samples: 10, Noise: 0.5, SubspaceDim: 5}, eta: 2},
	} {
		p := newProblem(t, test.cfg, 4)
		cs := clients(p.Fed)
		got, err := run(algorithms.FedProx{Eta: test.eta}, p, rounds)
		if err != nil || len(got) != rounds {
			t.Fatalf("case %d: %d rounds, err %v", i, len(got), err)
		}
		theta := make([]float64, p.Dim)
		for _, r := range got {
			theta = average(cs, theta, func(c client, th []float64) []float64 { return c.prox(th, test.eta) })
			if !within(r.Theta, theta, tol) {
				t.Errorf("case %d round %d: θ = %v, want Σ w_i prox_i = %v", i, r.Index, r.Theta, theta)
				break
			}
		}
	}
}

// TestMinibatchFullBatch checks that the minibatch variants with B = n_i
// reduce to the full-batch algorithms (docs/papers.md §1.5, last item) under both
// batch weights (1/n_i and 1/B coincide for one batch holding every row): one
// batch holding all rows in a permuted order is the full gradient (FedAvg),
// and one proximal step on it is the exact proximal point (FedProx). A batch
// larger than a scarce client's n_i is also the whole client.
func TestMinibatchFullBatch(t *testing.T) {
	const (
		tol    = 1e-10
		rounds = 8
	)
	for i, test := range []struct {
		cfg  datasets.Linear
		mini algorithms.Algorithm
		full algorithms.Algorithm
	}{
		{
			cfg:  datasets.Linear{Clients: 5, Dim: 8, Samples: 30, Noise: 0.5},
			mini: algorithms.FedAvg{Eta: 0.1, LocalSteps: 1, Batch: 30, Seed: 1}, full: algorithms.FedAvg{Eta: 0.1, LocalSteps: 1},
		},
		{
			cfg:  datasets.Linear{Clients: 5, Dim: 8, Samples: 30, Noise: 0.5, ScarceClients: 2, ScarceSamples: 6, Gamma: 1},
			mini: algorithms.FedAvg{Eta: 0.1, LocalSteps: 5, Batch: 30, Seed: 2}, full: algorithms.FedAvg{Eta: 0.1, LocalSteps: 5},
		},
		{
			cfg:  datasets.Linear{Clients: 5, Dim: 8, Samples: 30, Noise: 0.5},
			mini: algorithms.FedProx{Eta: 0.1, Batch: 30, Seed: 3}, full: algorithms.FedProx{Eta: 0.1},
		},
		{
			cfg:  datasets.Linear{Clients: 5, Dim: 12, Samples: 40, Noise: 0.5, ScarceClients: 3, ScarceSamples: 5},
			mini: algorithms.FedProx{Eta: 1, Batch: 40, Seed: 4}, full: algorithms.FedProx{Eta: 1},
		},
		// The per-batch mean (batch_norm=batch).
		{
			cfg:  datasets.Linear{Clients: 5, Dim: 8, Samples: 30, Noise: 0.5},
			mini: algorithms.FedAvg{Eta: 0.1, LocalSteps: 1, Batch: 30, BatchNorm: model.NormBatch, Seed: 1}, full: algorithms.FedAvg{Eta: 0.1, LocalSteps: 1},
		},
		{
			cfg:  datasets.Linear{Clients: 5, Dim: 8, Samples: 30, Noise: 0.5, ScarceClients: 2, ScarceSamples: 6, Gamma: 1},
			mini: algorithms.FedAvg{Eta: 0.1, LocalSteps: 5, Batch: 30, BatchNorm: model.NormBatch, Seed: 2}, full: algorithms.FedAvg{Eta: 0.1, LocalSteps: 5},
		},
		{
			cfg:  datasets.Linear{Clients: 5, Dim: 12, Samples: 40, Noise: 0.5, ScarceClients: 3, ScarceSamples: 5},
			mini: algorithms.FedProx{Eta: 1, Batch: 40, BatchNorm: model.NormBatch, Seed: 4}, full: algorithms.FedProx{Eta: 1},
		},
	} {
		p := newProblem(t, test.cfg, 6)
		mini, err := run(test.mini, p, rounds)
		if err != nil {
			t.Fatalf("case %d minibatch: %v", i, err)
		}
		full, err := run(test.full, p, rounds)
		if err != nil {
			t.Fatalf("case %d full batch: %v", i, err)
		}
		if len(mini) != rounds || len(full) != rounds {
			t.Fatalf("case %d: %d and %d rounds, want %d", i, len(mini), len(full), rounds)
		}
		for k := range full {
			if !floats.EqualApprox(mini[k].Theta, full[k].Theta, tol) {
				t.Errorf("case %d round %d: %+v gives %v, %+v gives %v", i, k+1, test.mini, mini[k].Theta, test.full, full[k].Theta)
				break
			}
		}
	}
}

// TestMinibatchMoves checks that a true minibatch run (B < n_i) differs from
// full batch, and that it is reproducible: the same Seed gives identical
// rounds, another Seed other batches.
func TestMinibatchMoves(t *testing.T) {
	p := newProblem(t, datasets.Linear{Clients: 4, Dim: 8, Samples: 30, Noise: 0.5}, 8)
	for i, test := range []struct {
		alg, other, full algorithms.Algorithm
	}{
		{alg: algorithms.FedAvg{Eta: 0.05, LocalSteps: 2, Batch: 7, Seed: 1}, other: algorithms.FedAvg{Eta: 0.05, LocalSteps: 2, Batch: 7, Seed: 2},
			full: algorithms.FedAvg{Eta: 0.05, LocalSteps: 2}},
		{alg: algorithms.FedProx{Eta: 0.1, Batch: 10, Seed: 1}, other: algorithms.FedProx{Eta: 0.1, Batch: 10, Seed: 2},
			full: algorithms.FedProx{Eta: 0.1}},
	} {
		a, errA := run(test.alg, p, 5)
		b, errB := run(test.alg, p, 5)
		c, errC := run(test.other, p, 5)
		f, errF := run(test.full, p, 5)
		if err := errors.Join(errA, errB, errC, errF); err != nil {
			t.Fatalf("case %d: %v", i, err)
		}
		for k := range a {
			if !slices.Equal(a[k].Theta, b[k].Theta) || a[k].GradNorm != b[k].GradNorm {
				t.Errorf("case %d round %d: same seed, different rounds", i, k+1)
			}
		}
		last := len(a) - 1
		if floats.EqualApprox(a[last].Theta, c[last].Theta, 1e-6) {
			t.Errorf("case %d: seeds 1 and 2 give the same iterate", i)
		}
		if floats.EqualApprox(a[last].Theta, f[last].Theta, 1e-6) {
			t.Errorf("case %d: minibatch iterate equals the full-batch one", i)
		}
	}
}

// TestMinibatchConventions checks what separates the two batch weights
// on a real minibatch run (B < n_i): with 1/n_i every round of FedAvg s=1
// equals the round computed by hand as M incremental-gradient passes
// u ← u − (η/n_i) X_bᵀ(X_b u − y_b) over the same batches; with 1/B the
// steps are n_i/B times larger, so the runs differ.
func TestMinibatchConventions(t *testing.T) {
	const (
		rounds = 4
		batch  = 7
		eta    = 0.05
	)
	p := newProblem(t, datasets.Linear{Clients: 3, Dim: 6, Samples: 21, Noise: 0.5, ScarceClients: 1, ScarceSamples: 9}, 9)
	local, err := run(algorithms.FedAvg{Eta: eta, LocalSteps: 1, Batch: batch, Seed: 5}, p, rounds)
	if err != nil {
		t.Fatal(err)
	}
	perBatch, err := run(algorithms.FedAvg{Eta: eta, LocalSteps: 1, Batch: batch, BatchNorm: model.NormBatch, Seed: 5}, p, rounds)
	if err != nil {
		t.Fatal(err)
	}
	// The batches of each round are replayed as the algorithm documents them
	// (docs/papers.md §8: a fresh permutation every round; client i shuffles with
	// Fisher–Yates on its own stream rand.NewPCG(Seed, 2^40 + i)); if that
	// scheme changes, this replay must follow it.
	rngs := make([]*rand.Rand, len(p.Fed.Clients))
	for i := range rngs {
		rngs[i] = rand.New(rand.NewPCG(5, 1<<40+uint64(i)))
	}
	theta := make([]float64, p.Dim)
	for r := 0; r < rounds; r++ {
		next := make([]float64, p.Dim)
		for i, c := range p.Fed.Clients {
			perm := make([]int, c.N)
			for j := range perm {
				perm[j] = j
			}
			for j := len(perm) - 1; j > 0; j-- {
				k := rngs[i].IntN(j + 1)
				perm[j], perm[k] = perm[k], perm[j]
			}
			u := append([]float64(nil), theta...)
			for lo := 0; lo < c.N; lo += batch {
				g := make([]float64, p.Dim)
				for _, row := range perm[lo:min(lo+batch, c.N)] {
					x := c.X[row*p.Dim : (row+1)*p.Dim]
					floats.AddScaled(g, floats.Dot(x, u)-c.Y[row], x)
				}
				floats.AddScaled(u, -eta/float64(c.N), g)
			}
			floats.AddScaled(next, float64(c.N)/float64(p.Fed.N()), u)
		}
		theta = next
		if !floats.EqualApprox(local[r].Theta, theta, 1e-12) {
			t.Fatalf("round %d: batch_norm=local gives %v, the incremental-gradient passes %v", r+1, local[r].Theta, theta)
		}
	}
	if floats.EqualApprox(local[rounds-1].Theta, perBatch[rounds-1].Theta, 1e-6) {
		t.Errorf("batch_norm=batch gives the same iterate as batch_norm=local")
	}
}

// TestMinibatchDiverged checks the stable step of minibatch FedAvg under both
// batch weights c (docs/papers.md §1.5): a step u ← (I − η c X_bᵀX_b)u + … is
// non-expansive iff η c λ_max(X_bᵀX_b) ≤ 2. With B = 1 a batch is one row x
// and λ_max(x xᵀ) = ‖x‖² whatever the partition, so the limit is
// 2/max_{i,j} c‖x_ij‖² with c = 1/n_i (local) or 1 (batch): 4 times it
// diverges with a message naming the limit, 0.9 of it runs to the end — for
// 1/n_i far above the full-batch limit 2/max_i λ_max(X_iᵀX_i/n_i).
func TestMinibatchDiverged(t *testing.T) {
	const rounds = 300
	p := newProblem(t, datasets.Linear{Clients: 4, Dim: 5, Samples: 30, Noise: 0.5, ScarceClients: 2, ScarceSamples: 10}, 13)
	var fullLocal float64
	for _, c := range clients(p.Fed) {
		fullLocal = math.Max(fullLocal, c.lambdaMax())
	}
	for _, norm := range []model.BatchNorm{model.NormLocal, model.NormBatch} {
		var curv float64
		for _, c := range p.Fed.Clients {
			for j := 0; j < c.N; j++ {
				x := c.X[j*p.Dim : (j+1)*p.Dim]
				w := 1.0
				if norm == model.NormLocal {
					w = 1 / float64(c.N)
				}
				curv = math.Max(curv, w*floats.Dot(x, x))
			}
		}
		limit := 2 / curv
		if norm == model.NormLocal && !(limit > 2/fullLocal) {
			t.Errorf("B=1, 1/n_i: limit %v not above the full-batch limit %v", limit, 2/fullLocal)
		}
		got, err := run(algorithms.FedAvg{Eta: 4 * limit, LocalSteps: 2, Batch: 1, BatchNorm: norm, Seed: 1}, p, rounds)
		var de *algorithms.DivergedError
		if !errors.As(err, &de) {
			t.Fatalf("batch_norm=%v η=%v: %d rounds, err %v; want *DivergedError", norm, 1.5*limit, len(got), err)
		}
		if !scalar.EqualWithinAbsOrRel(de.Limit, limit, 1e-10, 1e-10) {
			t.Errorf("batch_norm=%v: Limit = %v (%s), want %v", norm, de.Limit, de.Of, limit)
		}
		if msg := de.Error(); !strings.Contains(msg, "exceeds the stable limit") || !strings.Contains(msg, "batch_norm="+norm.String()) {
			t.Errorf("batch_norm=%v: message %q does not explain the limit", norm, msg)
		}
		if got, err := run(algorithms.FedAvg{Eta: 0.9 * limit, LocalSteps: 2, Batch: 1, BatchNorm: norm, Seed: 1}, p, rounds); err != nil || len(got) != rounds {
			t.Errorf("batch_norm=%v η=0.9·limit: %d rounds, err %v; want a stable run", norm, len(got), err)
		}
	}
}

// TestIdenticalClients checks that federating M copies of one data set
// changes nothing: with weights summing to 1, FedAvg is single-client local
// GD with s steps per round and FedProx the repeated proximal map.
func TestIdenticalClients(t *testing.T) {
	const rounds = 12
	for i, test := range []struct {
		n, d, m int
	}{
		{n: 30, d: 8, m: 4},
		{n: 5, d: 12, m: 3}, // raw design
	} {
		base, err := datasets.Linear{Clients: 1, Dim: test.d, Samples: test.n, Noise: 0.5}.Generate(uint64(i) + 20)
		if err != nil {
			t.Fatal(err)
		}
		src := base.Clients[0]
		fed := &datasets.Federation{Dim: test.d, Truth: base.Truth, Noise: base.Noise, Clients: make([]datasets.Client, test.m)}
		for j := range fed.Clients {
			fed.Clients[j] = datasets.Client{N: src.N, X: slices.Clone(src.X), Y: slices.Clone(src.Y), Truth: slices.Clone(src.Truth)}
		}
		p := model.NewProblem(fed)
		if sum := floats.Sum(p.Weights); !scalar.EqualWithinAbsOrRel(sum, 1, 1e-15, 1e-15) {
			t.Errorf("case %d: Σ w_i = %v, want 1", i, sum)
		}
		one := clients(base)[0]
		for _, test2 := range []struct {
			alg   algorithms.Algorithm
			local func([]float64) []float64
		}{
			{alg: algorithms.FedAvg{Eta: 0.1, LocalSteps: 3}, local: func(th []float64) []float64 { return one.gd(th, 0.1, 3) }},
			{alg: algorithms.FedAvg{Eta: 0.05, LocalSteps: 1}, local: func(th []float64) []float64 { return one.gd(th, 0.05, 1) }},
			{alg: algorithms.FedProx{Eta: 0.3}, local: func(th []float64) []float64 { return one.prox(th, 0.3) }},
		} {
			got, err := run(test2.alg, p, rounds)
			if err != nil {
				t.Fatalf("case %d %+v: %v", i, test2.alg, err)
			}
			theta := make([]float64, test.d)
			for _, r := range got {
				theta = test2.local(theta)
				if !within(r.Theta, theta, 1e-10) {
					t.Errorf("case %d %+v round %d: θ = %v, want single-client %v", i, test2.alg, r.Index, r.Theta, theta)
					break
				}
			}
		}
	}
}

// TestCancel checks that cancelling the context inside emit after round k
// stops the run with exactly k rounds and context.Canceled (docs/codebase.md §6).
func TestCancel(t *testing.T) {
	p := newProblem(t, datasets.Linear{Clients: 4, Dim: 8, Samples: 20, Noise: 0.5}, 9)
	for _, alg := range []algorithms.Algorithm{
		algorithms.FedAvg{Eta: 0.1, LocalSteps: 1},
		algorithms.FedAvg{Eta: 0.1, LocalSteps: 5},
		algorithms.FedAvg{Eta: 0.1, LocalSteps: 2, Batch: 5, Seed: 1},
		algorithms.FedProx{Eta: 0.1},
		algorithms.FedProx{Eta: 0.1, Batch: 5, Seed: 1},
	} {
		for _, k := range []int{0, 1, 3} {
			ctx, cancel := context.WithCancel(context.Background())
			if k == 0 {
				cancel()
			}
			var got []algorithms.LinearRound
			err := alg.Run(ctx, p, 10, func(r algorithms.LinearRound) {
				got = append(got, r)
				if len(got) == k {
					cancel()
				}
			})
			cancel()
			if !errors.Is(err, context.Canceled) {
				t.Errorf("%+v k=%d: err = %v, want context.Canceled", alg, k, err)
			}
			if len(got) != k {
				t.Errorf("%+v k=%d: %d rounds emitted, want %d", alg, k, len(got), k)
			}
			for j, r := range got {
				if r.Index != j+1 {
					t.Errorf("%+v: round %d has Index %d", alg, j+1, r.Index)
				}
			}
		}
	}
}

// TestDiverged checks that a step size above the stable limit ends the run
// with *DivergedError at a round ≥ 1, after emitting only finite rounds, and
// that Limit is 2/λ_max of the Hessian the local steps apply: the pooled
// XᵀX/N for s = 1 (centralised GD), the largest local X_iᵀX_i/n_i for s > 1.
// λ_max comes from SVDs of the raw designs. Stable step sizes, and FedProx
// at any step size, run to the end.
func TestDiverged(t *testing.T) {
	const rounds = 400
	cfg := datasets.Linear{Clients: 5, Dim: 8, Samples: 30, Noise: 0.5, ScarceClients: 2, ScarceSamples: 10}
	p := newProblem(t, cfg, 10)
	pooled := stacked(p.Fed).lambdaMax()
	var local float64
	for _, c := range clients(p.Fed) {
		local = math.Max(local, c.lambdaMax())
	}
	for i, test := range []struct {
		alg      algorithms.Algorithm
		eta      float64
		diverges bool
		limit    float64
	}{
		{alg: algorithms.FedAvg{Eta: 3 / pooled, LocalSteps: 1}, eta: 3 / pooled, diverges: true, limit: 2 / pooled},
		{alg: algorithms.FedAvg{Eta: 3 / local, LocalSteps: 5}, eta: 3 / local, diverges: true, limit: 2 / local},
		{alg: algorithms.FedAvg{Eta: 3 / local, LocalSteps: 10}, eta: 3 / local, diverges: true, limit: 2 / local},
		{alg: algorithms.FedAvg{Eta: 1.9 / pooled, LocalSteps: 1}, eta: 1.9 / pooled},
		{alg: algorithms.FedAvg{Eta: 1.9 / local, LocalSteps: 5}, eta: 1.9 / local},
		{alg: algorithms.FedProx{Eta: 100 / local}, eta: 100 / local},
	} {
		got, err := run(test.alg, p, rounds)
		for _, r := range got {
			if !finiteAll(r.Theta) || math.IsNaN(r.GradNorm) || math.IsInf(r.GradNorm, 0) || math.IsNaN(r.EstError) {
				t.Fatalf("case %d: non-finite round %d emitted: %+v", i, r.Index, r)
			}
		}
		if !test.diverges {
			if err != nil || len(got) != rounds {
				t.Errorf("case %d %+v: %d rounds, err %v; want a stable run", i, test.alg, len(got), err)
			}
			continue
		}
		var de *algorithms.DivergedError
		if !errors.As(err, &de) {
			t.Fatalf("case %d %+v: err = %v, want *DivergedError", i, test.alg, err)
		}
		if de.Round < 1 || len(got) != de.Round-1 {
			t.Errorf("case %d: diverged at round %d after %d emitted rounds", i, de.Round, len(got))
		}
		if de.Eta != test.eta {
			t.Errorf("case %d: Eta = %v, want %v", i, de.Eta, test.eta)
		}
		if !scalar.EqualWithinAbsOrRel(de.Limit, test.limit, 1e-10, 1e-10) {
			t.Errorf("case %d: Limit = %v (%s), want %v", i, de.Limit, de.Of, test.limit)
		}
		if msg := de.Error(); !strings.Contains(msg, "exceeds the stable limit") || !strings.Contains(msg, fmt.Sprint(de.Round)) {
			t.Errorf("case %d: message %q does not explain the limit", i, msg)
		}
	}
}

func finiteAll(x []float64) bool {
	for _, v := range x {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return false
		}
	}
	return true
}

// TestBadParams checks that invalid parameters return ErrBadParams before
// any round is emitted.
func TestBadParams(t *testing.T) {
	p := newProblem(t, datasets.Linear{Clients: 2, Dim: 3, Samples: 5, Noise: 0.5}, 1)
	for _, alg := range []algorithms.Algorithm{
		algorithms.FedAvg{Eta: 0, LocalSteps: 1},
		algorithms.FedAvg{Eta: -0.1, LocalSteps: 1},
		algorithms.FedAvg{Eta: math.NaN(), LocalSteps: 1},
		algorithms.FedAvg{Eta: math.Inf(1), LocalSteps: 1},
		algorithms.FedAvg{Eta: 0.1, LocalSteps: 0},
		algorithms.FedAvg{Eta: 0.1, LocalSteps: 1, Batch: -1},
		algorithms.FedProx{Eta: 0},
		algorithms.FedProx{Eta: math.NaN()},
		algorithms.FedProx{Eta: 0.1, Batch: -2},
	} {
		got, err := run(alg, p, 3)
		if !errors.Is(err, algorithms.ErrBadParams) || len(got) != 0 {
			t.Errorf("%+v: %d rounds, err %v; want ErrBadParams", alg, len(got), err)
		}
	}
}

// TestConcurrentRacers runs several racers on one shared Problem at once, as
// experiment.Run does (they share the cached proximal factors and
// curvatures), and checks that every racer emits exactly what it emits when
// run alone on a fresh Problem: the result does not depend on scheduling.
// Run with -race to check the sharing.
func TestConcurrentRacers(t *testing.T) {
	const rounds = 20
	cfg := datasets.Linear{Clients: 5, Dim: 10, Samples: 30, Noise: 0.5, ScarceClients: 2, ScarceSamples: 6, Gamma: 0.5}
	racers := []algorithms.Algorithm{
		algorithms.FedAvg{Eta: 0.1, LocalSteps: 1},
		algorithms.FedAvg{Eta: 0.1, LocalSteps: 5},
		algorithms.FedAvg{Eta: 0.05, LocalSteps: 2, Batch: 8, Seed: 3},
		algorithms.FedProx{Eta: 0.1},
		algorithms.FedProx{Eta: 0.1},
		algorithms.FedProx{Eta: 0.1, Batch: 8, Seed: 3},
		algorithms.FedAvg{Eta: 100, LocalSteps: 3}, // diverges
	}
	shared := newProblem(t, cfg, 12)
	got := make([][]algorithms.LinearRound, len(racers))
	errs := make([]error, len(racers))
	var wg sync.WaitGroup
	for i, alg := range racers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			got[i], errs[i] = run(alg, shared, rounds)
		}()
	}
	wg.Wait()
	if de := new(algorithms.DivergedError); !errors.As(errs[len(errs)-1], &de) {
		t.Errorf("racer with η = 100: err = %v, want *DivergedError", errs[len(errs)-1])
	}
	for i, alg := range racers {
		want, wantErr := run(alg, newProblem(t, cfg, 12), rounds)
		if fmt.Sprint(errs[i]) != fmt.Sprint(wantErr) || len(got[i]) != len(want) {
			t.Errorf("%+v: concurrent %d rounds, err %v; alone %d rounds, err %v", alg, len(got[i]), errs[i], len(want), wantErr)
			continue
		}
		for k := range want {
			if !slices.Equal(got[i][k].Theta, want[k].Theta) || got[i][k].GradNorm != want[k].GradNorm {
				t.Errorf("%+v round %d: concurrent run differs from a lone run", alg, k+1)
				break
			}
		}
	}
}
