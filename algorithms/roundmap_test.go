package algorithms_test

import (
	"fmt"
	"testing"

	"github.com/fedscope/fedscope/algorithms"
	"github.com/fedscope/fedscope/datasets"
	"github.com/fedscope/fedscope/model"
	"gonum.org/v1/gonum/floats"
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
// FedAvg with s = 1 is pooled least squares (PAPERS.md §1.6), here computed
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
