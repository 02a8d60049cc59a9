package datasets

import (
	"fmt"
	"math"
)

// SoftLabels describes the FedLRGD preset data (docs/papers.md §8 for paper 001,
// with the Appendix-A loss of §2.8): features x ~ U[0,1]^d, a hidden truth
// θ_true ~ U[−1,1]^d and soft labels y = sigmoid(4 θ_trueᵀ(x − 0.5)) ∈ [0,1].
// The server holds Server samples and each of the Clients clients Samples,
// all from the same distribution unless Shift > 0, which moves client c's
// features towards a random corner by up to Shift (clipped to [0,1]).
type SoftLabels struct {
	Clients int     // m
	Samples int     // s per client
	Server  int     // server samples (the largest rank r of the racers)
	Dim     int     // d_x (5)
	Shift   float64 // client covariate shift in [0,1]; 0 = same distribution
}

// Validate reports the first inconsistency.
func (c SoftLabels) Validate() error {
	switch {
	case c.Clients < 1:
		return fmt.Errorf("clients=%d: need at least 1 client", c.Clients)
	case c.Samples < 1:
		return fmt.Errorf("samples=%d: need at least 1 sample per client", c.Samples)
	case c.Server < 1:
		return fmt.Errorf("rank=%d: the server needs at least 1 sample", c.Server)
	case c.Dim < 1:
		return fmt.Errorf("dim=%d: need dimension at least 1", c.Dim)
	case !(c.Shift >= 0 && c.Shift <= 1):
		return fmt.Errorf("shift=%v: must lie in [0, 1]", c.Shift)
	}
	if n := (c.Clients*c.Samples + c.Server) * (c.Dim + 1); n > MaxEntries {
		return fmt.Errorf("(clients × samples + server) × (dim+1) = %d: over the limit of %d numbers", n, MaxEntries)
	}
	return nil
}

// SoftLabelData holds samples as rows (x_1..x_d, y) of length Dim+1.
type SoftLabelData struct {
	Dim     int
	Truth   []float64
	Server  []float64   // Server × (Dim+1)
	Clients [][]float64 // per client, Samples × (Dim+1)
}

// Generate draws the data: the truth and the server's samples from stream
// 0, client c from stream c+1.
func (c SoftLabels) Generate(seed uint64) (*SoftLabelData, error) {
	if err := c.Validate(); err != nil {
		return nil, fmt.Errorf("%w: %w", ErrInvalid, err)
	}
	d := c.Dim
	shared := stream(seed, 0)
	out := &SoftLabelData{Dim: d, Truth: make([]float64, d), Clients: make([][]float64, c.Clients)}
	for k := range out.Truth {
		out.Truth[k] = 2*shared.Float64() - 1
	}
	label := func(row []float64) {
		var z float64
		for k := 0; k < d; k++ {
			z += out.Truth[k] * (row[k] - 0.5)
		}
		row[d] = 1 / (1 + math.Exp(-4*z))
	}
	out.Server = make([]float64, c.Server*(d+1))
	for i := 0; i < c.Server; i++ {
		row := out.Server[i*(d+1) : (i+1)*(d+1)]
		for k := 0; k < d; k++ {
			row[k] = shared.Float64()
		}
		label(row)
	}
	for j := range out.Clients {
		rng := stream(seed, uint64(j)+1)
		corner := make([]float64, d)
		for k := range corner {
			corner[k] = float64(rng.IntN(2))
		}
		xs := make([]float64, c.Samples*(d+1))
		for i := 0; i < c.Samples; i++ {
			row := xs[i*(d+1) : (i+1)*(d+1)]
			for k := 0; k < d; k++ {
				row[k] = (1-c.Shift)*rng.Float64() + c.Shift*corner[k]
			}
			label(row)
		}
		out.Clients[j] = xs
	}
	return out, nil
}
