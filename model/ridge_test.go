package model

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/fedscope/fedscope/datasets"
	"gonum.org/v1/gonum/mat"
)

// TestRFFKernel checks the feature map against the Gaussian kernel it
// approximates: 2·φ(x)ᵀφ(y) → exp(−‖x−y‖²/(2σ²)) (docs/papers.md §4.4, with the
// paper's 1/√M scaling), with a root-mean-square error over pairs that
// falls like 1/√M: quadrupling M halves it (within sampling noise).
func TestRFFKernel(t *testing.T) {
	const d, pairs, bw = 5, 200, 2.0
	rng := rand.New(rand.NewPCG(1, 2))
	xs := make([]float64, 2*pairs*d)
	for k := range xs {
		xs[k] = rng.NormFloat64()
	}
	rmse := func(m int) float64 {
		var se float64
		const seeds = 8
		for seed := uint64(0); seed < seeds; seed++ {
			f := NewRFF(d, m, bw, seed)
			phi := make([]float64, 2*pairs*m)
			f.MapTo(phi, xs, 2*pairs)
			for p := 0; p < pairs; p++ {
				a, b := phi[2*p*m:(2*p+1)*m], phi[(2*p+1)*m:(2*p+2)*m]
				x, y := xs[2*p*d:(2*p+1)*d], xs[(2*p+1)*d:(2*p+2)*d]
				var dot, dist float64
				for k := range a {
					dot += a[k] * b[k]
				}
				for k := range x {
					dist += (x[k] - y[k]) * (x[k] - y[k])
				}
				e := 2*dot - math.Exp(-dist/(2*bw))
				se += e * e
			}
		}
		return math.Sqrt(se / (pairs * seeds))
	}
	prev := rmse(64)
	for _, m := range []int{256, 1024, 4096} {
		cur := rmse(m)
		if ratio := prev / cur; ratio < 1.6 || ratio > 2.5 {
			t.Errorf("M=%d: RMSE %.4g, previous %.4g: ratio %.2f, want about 2 (1/√M)", m, cur, prev, ratio)
		}
		prev = cur
	}
	if prev > 0.05 {
		t.Errorf("M=4096: RMSE %.4g, want < 0.05", prev)
	}
}

// randomSet draws n rows of d standard normal features and responses.
func randomSet(rng *rand.Rand, n, d, classes int) *datasets.Set {
	s := &datasets.Set{N: n, Dim: d, X: make([]float64, n*d), Y: make([]float64, n), Classes: classes}
	for k := range s.X {
		s.X[k] = rng.NormFloat64()
	}
	for i := range s.Y {
		if classes > 0 {
			s.Y[i] = float64(rng.IntN(classes))
		} else {
			s.Y[i] = rng.NormFloat64()
		}
	}
	return s
}

// naiveRidge solves (XᵀX/n + λI) w = XᵀT/n with gonum's dense LU, the
// independent truth for KRR on the stacked rows.
func naiveRidge(sets []*datasets.Set, lambda float64, classes int) *mat.Dense {
	var xs, ts []float64
	n := 0
	d := sets[0].Dim
	c := max(classes, 1)
	for _, s := range sets {
		xs = append(xs, s.X...)
		for _, y := range s.Y {
			row := make([]float64, c)
			if classes > 0 {
				row[int(y)] = 1
			} else {
				row[0] = y
			}
			ts = append(ts, row...)
		}
		n += s.N
	}
	x := mat.NewDense(n, d, xs)
	tm := mat.NewDense(n, c, ts)
	var h mat.Dense
	h.Mul(x.T(), x)
	h.Scale(1/float64(n), &h)
	for k := 0; k < d; k++ {
		h.Set(k, k, h.At(k, k)+lambda)
	}
	var b, w mat.Dense
	b.Mul(x.T(), tm)
	b.Scale(1/float64(n), &b)
	if err := w.Solve(&h, &b); err != nil {
		panic(err)
	}
	return &w
}

func closeTo(t *testing.T, what string, got []float64, want *mat.Dense, tol float64) {
	t.Helper()
	r, c := want.Dims()
	for i := 0; i < r; i++ {
		for k := 0; k < c; k++ {
			if g, w := got[i*c+k], want.At(i, k); math.Abs(g-w) > tol*(1+math.Abs(w)) {
				t.Fatalf("%s[%d,%d] = %.10g, want %.10g", what, i, k, g, w)
			}
		}
	}
}

// TestRidgeClosedForms checks KRR and DKRR against dense solves on the raw
// rows, for primal and dual (fewer samples than features) clients, for
// regression and one-hot classification.
func TestRidgeClosedForms(t *testing.T) {
	for _, test := range []struct {
		name       string
		sizes      []int
		d, classes int
		lambda     float64
	}{
		{"primal regression", []int{40, 60, 30}, 8, 0, 0.1},
		{"dual clients", []int{5, 3, 50}, 8, 0, 0.01},
		{"dual pooled", []int{2, 3, 1}, 8, 0, 0.5},
		{"one-hot", []int{30, 25}, 6, 3, 0.05},
	} {
		t.Run(test.name, func(t *testing.T) {
			rng := rand.New(rand.NewPCG(3, 4))
			var sets []*datasets.Set
			for _, n := range test.sizes {
				sets = append(sets, randomSet(rng, n, test.d, test.classes))
			}
			r, err := NewRidge(sets, randomSet(rng, 10, test.d, test.classes), Identity(test.d), test.lambda)
			if err != nil {
				t.Fatal(err)
			}
			closeTo(t, "KRR", r.KRR, naiveRidge(sets, test.lambda, test.classes), 1e-8)
			// DKRR = Σ p_j (local closed form).
			c := max(test.classes, 1)
			want := mat.NewDense(test.d, c, nil)
			total := 0
			for _, s := range sets {
				total += s.N
			}
			for _, s := range sets {
				var part mat.Dense
				part.Scale(float64(s.N)/float64(total), naiveRidge([]*datasets.Set{s}, test.lambda, test.classes))
				want.Add(want, &part)
			}
			closeTo(t, "DKRR", r.DKRR, want, 1e-8)
			// H_j applied and inverted round-trips.
			ws := r.NewWork()
			for j := range r.Clients {
				r.Clients[j].Op.MulTo(ws.U, r.DKRR, c, ws.Scratch)
				r.Clients[j].Op.SolveTo(ws.V, ws.U, c, ws.Scratch)
				closeTo(t, "H⁻¹Hw", ws.V, mat.NewDense(test.d, c, r.DKRR), 1e-8)
			}
		})
	}
}

// TestEvaluate checks test MSE and accuracy against a direct count.
func TestEvaluate(t *testing.T) {
	train := &datasets.Set{N: 3, Dim: 2, X: []float64{1, 0, 0, 1, 1, 1}, Y: []float64{0, 1, 1}, Classes: 2}
	test := &datasets.Set{N: 2, Dim: 2, X: []float64{1, 0, 0, 1}, Y: []float64{0, 0}, Classes: 2}
	r, err := NewRidge([]*datasets.Set{train}, test, Identity(2), 1)
	if err != nil {
		t.Fatal(err)
	}
	// W = [[1, 0], [0, 1]]: test row 1 predicts (1, 0) → class 0 (right),
	// row 2 predicts (0, 1) → class 1 (wrong); squared errors 0 and 2.
	mse, acc := r.Evaluate([]float64{1, 0, 0, 1}, r.NewWork())
	if mse != 1 || acc != 0.5 {
		t.Errorf("mse %v acc %v, want 1 and 0.5", mse, acc)
	}
}

// TestSolveBatch checks SolveBatch against SolveTo client by client bit
// for bit, on primal and dual clients mixed (the batch overlaps only the
// primal ones of one size), for one and for several columns, and that the
// solves invert the operators (H_j·H_j⁻¹v = v).
func TestSolveBatch(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	for _, classes := range []int{0, 3} {
		var sets []*datasets.Set
		for _, n := range []int{40, 5, 60, 30, 3, 45, 50} {
			sets = append(sets, randomSet(rng, n, 8, classes))
		}
		r, err := NewRidge(sets, nil, Identity(8), 0.05)
		if err != nil {
			t.Fatal(err)
		}
		c := max(classes, 1)
		ops := make([]*RidgeOp, len(r.Clients))
		dst, v, want := make([][]float64, len(ops)), make([][]float64, len(ops)), make([][]float64, len(ops))
		ws := r.NewWork()
		for j := range ops {
			ops[j] = r.Clients[j].Op
			v[j] = make([]float64, 8*c)
			for k := range v[j] {
				v[j][k] = rng.NormFloat64()
			}
			dst[j], want[j] = make([]float64, 8*c), make([]float64, 8*c)
			ops[j].SolveTo(want[j], v[j], c, ws.Scratch)
		}
		SolveBatch(ops, dst, v, c, ws.Scratch)
		for j := range ops {
			for k := range dst[j] {
				if math.Float64bits(dst[j][k]) != math.Float64bits(want[j][k]) {
					t.Fatalf("classes=%d client %d entry %d: batch %v, SolveTo %v", classes, j, k, dst[j][k], want[j][k])
				}
			}
			ops[j].MulTo(ws.U, dst[j], c, ws.Scratch)
			for k, x := range v[j] {
				if math.Abs(ws.U[k]-x) > 1e-9*(1+math.Abs(x)) {
					t.Fatalf("classes=%d client %d: H·H⁻¹v = %v, want %v", classes, j, ws.U[k], x)
				}
			}
		}
	}
}
