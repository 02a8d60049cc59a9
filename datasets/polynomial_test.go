package datasets_test

import (
	"errors"
	"math"
	"testing"

	"github.com/fedscope/fedscope/datasets"
	"gonum.org/v1/gonum/floats/scalar"
)

// TestPolynomialFederation checks the E000-5 setup of docs/papers.md §1.9 and §8
// from its definition: client i sees only [−1 + 2i/M, −1 + 2(i+1)/M), its
// covariates are the cell midpoints of n equal cells, rows are the monomials
// of x, and the labels scatter around U5(x) = 32x⁵ − 32x³ + 6x with the noise
// σ (sample standard deviation over all residuals within 5 %).
func TestPolynomialFederation(t *testing.T) {
	const m, n = 20, 50
	cfg := datasets.Polynomial{Clients: m, Samples: n, Degree: 5, Noise: 0.5}
	fed, err := cfg.Generate(3)
	if err != nil {
		t.Fatal(err)
	}
	if fed.Dim != 6 || len(fed.Clients) != m || fed.N() != m*n {
		t.Fatalf("dim %d, %d clients, N %d", fed.Dim, len(fed.Clients), fed.N())
	}
	var ss float64
	for i, c := range fed.Clients {
		lo, hi := -1+2*float64(i)/m, -1+2*float64(i+1)/m
		for j := 0; j < n; j++ {
			row := c.X[j*6 : (j+1)*6]
			x := row[1]
			if want := lo + (float64(j)+0.5)*(hi-lo)/n; !scalar.EqualWithinAbs(x, want, 1e-15) {
				t.Fatalf("client %d row %d: x = %v, want midpoint %v", i, j, x, want)
			}
			if x < lo || x >= hi {
				t.Fatalf("client %d: x = %v outside [%v, %v)", i, x, lo, hi)
			}
			for a := range row {
				if !scalar.EqualWithinAbsOrRel(row[a], math.Pow(x, float64(a)), 1e-15, 1e-13) {
					t.Fatalf("client %d row %d: feature %d = %v, want x^%d", i, j, a, row[a], a)
				}
			}
			u5 := 32*math.Pow(x, 5) - 32*math.Pow(x, 3) + 6*x
			ss += (c.Y[j] - u5) * (c.Y[j] - u5)
		}
	}
	if sd := math.Sqrt(ss / float64(m*n)); math.Abs(sd-0.5) > 0.025 {
		t.Errorf("noise standard deviation %v, want 0.5", sd)
	}
	if !scalar.EqualWithinAbs(datasets.PolyEval(fed.Truth, 0.3), 32*math.Pow(0.3, 5)-32*math.Pow(0.3, 3)+1.8, 1e-14) {
		t.Error("the truth is not U5")
	}
	for _, bad := range []datasets.Polynomial{{Clients: 0, Samples: 1, Degree: 5}, {Clients: 1, Samples: 0, Degree: 5},
		{Clients: 1, Samples: 1, Degree: 4}, {Clients: 1, Samples: 1, Degree: 12}, {Clients: 1, Samples: 1, Degree: 5, Noise: math.NaN()}} {
		if _, err := bad.Generate(1); !errors.Is(err, datasets.ErrInvalid) {
			t.Errorf("%+v: error %v, want ErrInvalid", bad, err)
		}
	}
}
