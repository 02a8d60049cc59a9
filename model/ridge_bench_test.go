package model

import (
	"math/rand/v2"
	"os"
	"testing"

	"github.com/fedscope/fedscope/datasets"
	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/blas/blas64"
	"gonum.org/v1/gonum/lapack/lapack64"
)

// pendigits reads the shared LIBSVM files (docs/papers.md §4.7, Table 3) or
// skips the benchmark.
func pendigits(b *testing.B) (train, test *datasets.Set) {
	const dir = "../../shared/data/"
	if _, err := os.Stat(dir + "pendigits.scale"); err != nil {
		b.Skip("pendigits not found in ../shared/data (see its README): ", err)
	}
	train, err := datasets.ReadFile(dir+"pendigits.scale", datasets.FormatAuto, false)
	if err != nil {
		b.Fatal(err)
	}
	test, err = datasets.ReadFile(dir+"pendigits.scale.t", datasets.FormatAuto, false)
	if err != nil {
		b.Fatal(err)
	}
	datasets.Classify(train, test)
	return train, test
}

// BenchmarkKRRPendigits is centralised KRR on pendigits as scikit-learn's
// RBFSampler(n_components=2000) + RidgeClassifier(solver="cholesky") does
// the same work: 2000 random features of the 7494 training and 3498 test
// rows, the Gram matrix ΦᵀΦ (7494·2000² ≈ 3.0e10 flops), one Cholesky
// factorisation (2000³/3 ≈ 2.7e9), the solve for 10 one-hot columns, and
// the test predictions.
func BenchmarkKRRPendigits(b *testing.B) {
	train, test := pendigits(b)
	b.ReportAllocs()
	for b.Loop() {
		r, err := NewRidge([]*datasets.Set{train}, test, NewRFF(16, 2000, 1, 1), 1e-4)
		if err != nil {
			b.Fatal(err)
		}
		if _, acc := r.Evaluate(r.KRR, r.NewWork()); acc < 0.9 {
			b.Fatalf("accuracy %v", acc)
		}
	}
}

func randomSPD(m int) []float64 {
	rng := rand.New(rand.NewPCG(1, 1))
	x := make([]float64, 2*m*m)
	for k := range x {
		x[k] = rng.NormFloat64()
	}
	a := make([]float64, m*m)
	symRankTo(a, x, m, 2*m, 1, 0)
	return a
}

// BenchmarkCholesky2000 factorises a 2000×2000 Gram matrix (the KRR and
// tuning factorisation): cholesky against gonum's Dpotrf.
func BenchmarkCholesky2000(b *testing.B) {
	const m = 2000
	a := randomSPD(m)
	w := make([]float64, m*m)
	b.Run("cholesky", func(b *testing.B) {
		for b.Loop() {
			copy(w, a)
			if !cholesky(w, m) {
				b.Fatal("not positive definite")
			}
		}
	})
	b.Run("gonum", func(b *testing.B) {
		for b.Loop() {
			copy(w, a)
			if _, ok := lapack64.Potrf(blas64.Symmetric{Uplo: blas.Upper, N: m, Stride: m, Data: w}); !ok {
				b.Fatal("not positive definite")
			}
		}
	})
}

// BenchmarkGram7494x2000 is the Gram matrix of 7494 rows of 2000 features
// (pendigits' training set), symRankTo against gonum's Dsyrk.
func BenchmarkGram7494x2000(b *testing.B) {
	const n, m = 7494, 2000
	rng := rand.New(rand.NewPCG(1, 2))
	phi := make([]float64, n*m)
	for k := range phi {
		phi[k] = rng.NormFloat64()
	}
	c := make([]float64, m*m)
	b.Run("symRankTo", func(b *testing.B) {
		t := make([]float64, n*m)
		for b.Loop() {
			transposeTo(t, phi, n, m)
			symRankTo(c, t, m, n, 1, 0)
		}
	})
	b.Run("gonum", func(b *testing.B) {
		for b.Loop() {
			blas64.Syrk(blas.Trans, 1, blas64.General{Rows: n, Cols: m, Stride: m, Data: phi}, 0,
				blas64.Symmetric{Uplo: blas.Upper, N: m, Stride: m, Data: c})
		}
	})
}
