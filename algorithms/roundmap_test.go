package algorithms_test

import (
	"context"
	"fmt"
	"math"
	"runtime"
	"slices"
	"testing"

	"github.com/fedscope/fedscope/algorithms"
	"github.com/fedscope/fedscope/datasets"
	"github.com/fedscope/fedscope/model"
	"gonum.org/v1/gonum/floats"
	"gonum.org/v1/gonum/floats/scalar"
	"gonum.org/v1/gonum/mat"
)

// TestRoundMapStep checks the affine round map against the round computed on
// the raw designs (s explicit gradient steps per client, or an LU-solved
// proximal step, then the n_i/N average), from a random θ, for a plain
// federation, one with data-scarce clients (n_i < d) and a covariate
// subspace, and the polynomial federation of E000-5.
func TestRoundMapStep(t *testing.T) {
	lin, _ := datasets.Linear{Clients: 5, Dim: 10, Samples: 25, ScarceClients: 2, ScarceSamples: 4,
		SubspaceDim: 6, Gamma: 1, Noise: 0.5}.Generate(8)
	plain, _ := datasets.Linear{Clients: 3, Dim: 7, Samples: 20, Noise: 0.5}.Generate(9)
	poly, _ := datasets.Polynomial{Clients: 20, Samples: 3, Degree: 5, Noise: 0.5}.Generate(10)
	for name, fed := range map[string]*datasets.Federation{"subspace": lin, "plain": plain, "polynomial": poly} {
		p := model.NewProblem(fed)
		_, curv := p.Curvature()
		eta := 0.8 / curv
		spectra := model.SubspaceSpectra(fed)
		cs := clients(fed)
		theta := make([]float64, fed.Dim)
		for k := range theta {
			theta[k] = float64(k%3) - 1
		}
		for _, lc := range limitCases(eta) {
			var m algorithms.RoundMap
			switch alg := lc.alg.(type) {
			case algorithms.FedAvg:
				m = algorithms.NewFedAvgMap(spectra, p.Weights, fed.Dim, eta, alg.LocalSteps)
			case algorithms.FedProx:
				m = algorithms.NewFedProxMap(spectra, p.Weights, fed.Dim, eta)
			}
			got := make([]float64, fed.Dim)
			m.Step(got, theta)
			want := average(cs, theta, lc.local)
			if !floats.EqualApprox(got, want, 1e-10) {
				t.Errorf("%s %s: round map gives %v, raw round %v", name, lc.name, got, want)
			}
			if a := mat.NewDense(fed.Dim, fed.Dim, m.A); !mat.EqualApprox(a, a.T(), 1e-12) {
				t.Errorf("%s %s: A is not symmetric", name, lc.name)
			}
		}
	}
}

// TestLimitGammaZeroIsPooledLS: with one common truth (Γ = 0) the limit of
// FedAvg with s = 1 is pooled least squares (docs/papers.md §1.6), here computed
// by gonum's QR solve of the stacked N×d system, at the E000-3 shape.
func TestLimitGammaZeroIsPooledLS(t *testing.T) {
	for _, eta := range []float64{0.01, 0.1} {
		fed, err := datasets.Linear{Clients: 20, Dim: 40, Samples: 200, ScarceClients: 10, ScarceSamples: 20, Noise: 0.5}.Generate(4)
		if err != nil {
			t.Fatal(err)
		}
		pool := stacked(fed)
		var want mat.VecDense
		if err := want.SolveVec(pool.x, pool.y); err != nil {
			t.Fatal(err)
		}
		w := make([]float64, len(fed.Clients))
		for i, c := range fed.Clients {
			w[i] = float64(c.N) / float64(fed.N())
		}
		got := algorithms.NewFedAvgMap(model.SubspaceSpectra(fed), w, fed.Dim, eta, 1).Limit()
		if !floats.EqualApprox(got, want.RawVector().Data, 1e-9) {
			t.Errorf("η=%v: FedAvg s=1 limit is %g away from pooled least squares", eta,
				floats.Distance(got, want.RawVector().Data, 2))
		}
	}
}

func ExampleRoundMap() {
	fed, _ := datasets.Linear{Clients: 4, Dim: 3, Samples: 50, Noise: 0.1}.Generate(1)
	w := []float64{0.25, 0.25, 0.25, 0.25}
	m := algorithms.NewFedAvgMap(model.SubspaceSpectra(fed), w, fed.Dim, 0.1, 5)
	theta, next := make([]float64, 3), make([]float64, 3)
	for range 500 {
		m.Step(next, theta)
		theta, next = next, theta
	}
	fmt.Printf("%.6f\n", floats.Distance(theta, m.Limit(), 2))
	// Output: 0.000000
}

// mapFederations are the shapes the round maps are tested on: balanced
// Gram-form clients, unbalanced ones with n_i < d (kernel form), a
// covariate subspace mixing both forms with model heterogeneity, and the
// ill-conditioned polynomial federation of E000-5.
func mapFederations(t *testing.T) map[string]*datasets.Federation {
	t.Helper()
	gen := func(c datasets.Linear, seed uint64) *datasets.Federation {
		fed, err := c.Generate(seed)
		if err != nil {
			t.Fatal(err)
		}
		return fed
	}
	poly, err := datasets.Polynomial{Clients: 20, Samples: 3, Degree: 5, Noise: 0.5}.Generate(10)
	if err != nil {
		t.Fatal(err)
	}
	return map[string]*datasets.Federation{
		"plain":      gen(datasets.Linear{Clients: 4, Dim: 7, Samples: 20, Noise: 0.5}, 9),
		"unbalanced": gen(datasets.Linear{Clients: 5, Dim: 12, Samples: 40, ScarceClients: 3, ScarceSamples: 4, Noise: 0.5}, 3),
		"subspace": gen(datasets.Linear{Clients: 6, Dim: 10, Samples: 25, ScarceClients: 3, ScarceSamples: 3,
			SubspaceDim: 6, Gamma: 1, Noise: 0.5}, 8),
		"polynomial": poly,
		// More clients than one task of MapBuilder sums (algorithms.mapChunk).
		"many": gen(datasets.Linear{Clients: 100, Dim: 6, Samples: 8, ScarceClients: 40, ScarceSamples: 3, Gamma: 0.5, Noise: 0.5}, 2),
	}
}

// TestMapBuilderMatchesClients checks the round maps that MapBuilder
// assembles (repeated squaring and Cholesky in Gram form, eigenpairs of the
// kernel in kernel form) against one round computed client by client on the
// raw designs: s explicit gradient steps, or an LU-solved proximal step, then
// the n_i/N average (docs/papers.md §1.3, §1.4), to 1e-10; and against the
// spectral construction NewFedAvgMap/NewFedProxMap. The step sizes are a
// stable one and, for FedAvg, one beyond the local stability limit.
func TestMapBuilderMatchesClients(t *testing.T) {
	for name, fed := range mapFederations(t) {
		p := model.NewProblem(fed)
		_, curv := p.Curvature()
		cs := clients(fed)
		spectra := model.SubspaceSpectra(fed)
		theta := make([]float64, fed.Dim)
		for k := range theta {
			theta[k] = float64(k%3) - 1 + 0.1*float64(k)
		}
		var specs []algorithms.MapSpec
		for _, eta := range []float64{0.8 / curv, 1.5 / curv} {
			for _, s := range []int{1, 2, 5, 10, 13} {
				specs = append(specs, algorithms.MapSpec{Eta: eta, Steps: s})
			}
		}
		specs = append(specs, algorithms.MapSpec{Prox: true, Eta: 0.8 / curv}, algorithms.MapSpec{Prox: true, Eta: 20 / curv})
		var b algorithms.MapBuilder
		for _, pooled := range []*algorithms.Pooled{nil, {Gram: p.Gram, XtY: p.XtY}} {
			maps, err := b.Build(context.Background(), p.Locals(), p.Weights, p.Dim, specs, pooled, nil)
			if err != nil {
				t.Fatal(err)
			}
			for k, spec := range specs {
				m := maps[k]
				local := func(c client, th []float64) []float64 { return c.gd(th, spec.Eta, spec.Steps) }
				ref := algorithms.NewFedAvgMap(spectra, p.Weights, fed.Dim, spec.Eta, max(spec.Steps, 1))
				if spec.Prox {
					local = func(c client, th []float64) []float64 { return c.prox(th, spec.Eta) }
					ref = algorithms.NewFedProxMap(spectra, p.Weights, fed.Dim, spec.Eta)
				}
				want := average(cs, theta, local)
				got := make([]float64, fed.Dim)
				m.Step(got, theta)
				if !within(got, want, 1e-10) {
					t.Errorf("%s %+v pooled=%v: round map gives %v, client loop %v", name, spec, pooled != nil, got, want)
				}
				scale := 1 + mat.Norm(mat.NewDense(fed.Dim, fed.Dim, ref.A), math.Inf(1))
				if !floats.EqualApprox(m.A, ref.A, 1e-10*scale) || !floats.EqualApprox(m.C, ref.C, 1e-10*scale) {
					t.Errorf("%s %+v: A, c differ from the spectral construction by %g, %g", name, spec,
						floats.Distance(m.A, ref.A, math.Inf(1)), floats.Distance(m.C, ref.C, math.Inf(1)))
				}
			}
		}
	}
}

// TestMapBuilderDeterministic checks that the maps are the same bits
// whatever the number of goroutines that build them (the clients' terms are
// added in client order) and on one or two CPUs.
func TestMapBuilderDeterministic(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(0))
	for _, name := range []string{"subspace", "many"} {
		testMapBuilderDeterministic(t, mapFederations(t)[name])
	}
}

func testMapBuilderDeterministic(t *testing.T, fed *datasets.Federation) {
	p := model.NewProblem(fed)
	specs := []algorithms.MapSpec{{Eta: 0.01, Steps: 5}, {Eta: 0.01, Steps: 10}, {Prox: true, Eta: 0.01}, {Eta: 0.02, Steps: 3}}
	var want []algorithms.RoundMap
	for _, procs := range []int{1, 2} {
		runtime.GOMAXPROCS(procs)
		for _, workers := range []int{1, 2, 3, 0} {
			b := algorithms.MapBuilder{Workers: workers}
			maps, err := b.Build(context.Background(), p.Locals(), p.Weights, p.Dim, specs, nil, nil)
			if err != nil {
				t.Fatal(err)
			}
			if want == nil {
				for _, m := range maps {
					want = append(want, algorithms.RoundMap{Dim: m.Dim, A: slices.Clone(m.A), C: slices.Clone(m.C)})
				}
				continue
			}
			for k := range maps {
				if !slices.Equal(maps[k].A, want[k].A) || !slices.Equal(maps[k].C, want[k].C) {
					t.Errorf("GOMAXPROCS=%d workers=%d %+v: the map differs from the serial one", procs, workers, specs[k])
				}
			}
		}
	}
}

// TestProblemMapKeyPresses replays what the explorer does when keys change
// η and s on one prepared problem (round maps kept, power chains kept and
// recycled across step sizes) and checks that every map is the same bits as
// on a fresh problem: a cache must never change the numbers.
func TestProblemMapKeyPresses(t *testing.T) {
	cfg := datasets.Linear{Clients: 5, Dim: 10, Samples: 30, ScarceClients: 2, ScarceSamples: 4, Noise: 0.5}
	shared := newProblem(t, cfg, 6)
	for _, step := range [][]algorithms.MapSpec{
		{{Eta: 0.1, Steps: 1}, {Eta: 0.1, Steps: 5}, {Eta: 0.1, Steps: 10}, {Prox: true, Eta: 0.1}},
		{{Eta: 0.1, Steps: 12}},
		{{Eta: 0.1, Steps: 9}},
		{{Eta: 0.15, Steps: 5}, {Eta: 0.15, Steps: 9}, {Prox: true, Eta: 0.15}},
		{{Eta: 0.1, Steps: 10}},
		{{Eta: 0.15, Steps: 20}, {Eta: 0.05, Steps: 3}},
	} {
		if err := algorithms.PrepareMaps(context.Background(), shared, step); err != nil {
			t.Fatal(err)
		}
		for _, spec := range step {
			got := algorithms.ProblemMap(shared, spec)
			want := algorithms.ProblemMap(newProblem(t, cfg, 6), spec)
			if !slices.Equal(got.A, want.A) || !slices.Equal(got.C, want.C) {
				t.Errorf("%+v: the map on the reused problem differs from a fresh one", spec)
			}
		}
	}
}

// TestRunMatchesPerClient runs full-batch FedAvg and FedProx on the round
// maps and with PerClient (every client's steps explicitly, every round)
// and checks that the trajectories and their metrics agree to 1e-10.
func TestRunMatchesPerClient(t *testing.T) {
	for name, fed := range mapFederations(t) {
		p := model.NewProblem(fed)
		_, curv := p.Curvature()
		eta := 0.5 / curv
		for _, pair := range [][2]algorithms.Algorithm{
			{algorithms.FedAvg{Eta: eta, LocalSteps: 1}, algorithms.FedAvg{Eta: eta, LocalSteps: 1, PerClient: true}},
			{algorithms.FedAvg{Eta: eta, LocalSteps: 7}, algorithms.FedAvg{Eta: eta, LocalSteps: 7, PerClient: true}},
			{algorithms.FedProx{Eta: 3 * eta}, algorithms.FedProx{Eta: 3 * eta, PerClient: true}},
		} {
			got, err1 := run(pair[0], p, 30)
			want, err2 := run(pair[1], p, 30)
			if err1 != nil || err2 != nil || len(got) != 30 || len(want) != 30 {
				t.Fatalf("%s %+v: %d and %d rounds, errors %v, %v", name, pair[0], len(got), len(want), err1, err2)
			}
			for k := range want {
				g, w := got[k], want[k]
				if !within(g.Theta, w.Theta, 1e-10) ||
					!scalar.EqualWithinAbsOrRel(g.GradNorm, w.GradNorm, 1e-10, 1e-10) ||
					!scalar.EqualWithinAbsOrRel(g.EstError, w.EstError, 1e-10, 1e-10) ||
					math.IsNaN(g.ClientError) != math.IsNaN(w.ClientError) ||
					!math.IsNaN(w.ClientError) && !scalar.EqualWithinAbsOrRel(g.ClientError, w.ClientError, 1e-10, 1e-10) {
					t.Errorf("%s %+v round %d: map %+v, per client %+v", name, pair[0], k+1, g, w)
					break
				}
			}
		}
	}
}
