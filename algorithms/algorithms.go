// Package algorithms implements the federated algorithms of the seed papers as
// round loops. Each algorithm's Run checks its context between rounds and
// inside the client loop, emits one Round value per communication round and
// returns within one round of cancellation. Nothing here knows about the
// terminal: the TUI and the headless runner consume the same stream.
package algorithms

import (
	"context"
	"errors"
	"fmt"
	"math"

	"github.com/fedscope/fedscope/model"
)

// Round is what an algorithm reports after one communication round. It is
// passed by value with fresh slices, so a receiver may keep it.
type Round struct {
	Index    int       // t = 1, 2, …
	Theta    []float64 // global model θ_t
	GradNorm float64   // ‖∇l(θ_t)‖, l = (1/N) Σ‖y_i − X_i θ‖² (PAPERS.md §1.2)
	EstError float64   // ‖θ_t − θ*‖
	// ClientError is Σ w_i ‖θ_t − θ_i*‖ under model heterogeneity, NaN otherwise.
	// For clustered algorithms it is Σ w_i ‖θ_{z_i,t} − θ*_{z*_i}‖, the error of
	// the model each client uses (PAPERS.md §5.4).
	ClientError float64

	// Ridge and low-rank families (papers 003, 001); NaN where they do not apply.
	TestMSE  float64 // test mean squared error (PAPERS.md §4.7)
	TestAcc  float64 // test accuracy of the argmax prediction (classification)
	Subopt   float64 // F(θ_t) − F_* (PAPERS.md §2.1)
	Oracle   float64 // cumulative federated oracle complexity Γ (Definition 1, §2.3)
	CommUp   float64 // cumulative numbers sent by clients to the server
	CommDown float64 // cumulative numbers sent by the server to clients
	// Fields of clustered algorithms (PAPERS.md §5, paper 004); zero or NaN
	// for the others. Theta then holds the k cluster models, k×d row-major.

	// Phase is 1 (FedMD) or 2 (FedX + clustering); 0 for unphased algorithms.
	Phase int
	// ClusterDist is d(θ_t, θ*) = min_π max_j ‖θ_{π(j),t} − θ*_j‖.
	ClusterDist float64
	// Misclustered is the fraction of clients whose label, after the best
	// permutation, differs from the truth; NaN in Phase 1.
	Misclustered float64
	// Assign is the cluster each client picked this round, relabelled by the
	// best permutation so that it compares with the true labels; nil in
	// Phase 1.
	Assign []int
}

// Algorithm is one racer: a federated method with its parameters.
type Algorithm interface {
	// Run iterates `rounds` communication rounds from θ_0 = 0 (PAPERS.md §8).
	Run(ctx context.Context, p *model.Problem, rounds int, emit func(Round)) error
}

// DivergedError reports that the iterates became non-finite or exploded.
type DivergedError struct {
	Round int     // the round at which divergence was detected
	Eta   float64 // the step size used
	// Limit is the largest stable step size for this data, 2/λ_max of the
	// Hessian the local steps apply; NaN when unknown.
	Limit float64
	// Of names the Hessian the limit refers to, e.g. "the local Hessians".
	Of string
	// Reason, when set, explains the divergence instead of η and Limit.
	Reason string
}

func (e *DivergedError) Error() string {
	if e.Reason != "" {
		return fmt.Sprintf("diverged at round %d: %s", e.Round, e.Reason)
	}
	if math.IsNaN(e.Limit) || e.Eta < e.Limit {
		return fmt.Sprintf("diverged at round %d with η=%.4g", e.Round, e.Eta)
	}
	return fmt.Sprintf("diverged at round %d: η=%.4g exceeds the stable limit %.3g of %s for this data",
		e.Round, e.Eta, e.Limit, e.Of)
}

// ErrBadParams is wrapped by every parameter validation error.
var ErrBadParams = errors.New("invalid algorithm parameters")

// explosion is how far beyond the scale of the least-squares solution an
// iterate may wander before the run counts as diverged. Stable runs contract
// towards a fixed point near it and never come close.
const explosion = 1e6

// loop is the round loop every algorithm shares: it calls round(t, theta) to
// advance θ in place, then measures and emits, stopping on cancellation or
// divergence. diverged explains a divergence at round t.
func loop(ctx context.Context, p *model.Problem, rounds int, emit func(Round),
	round func(t int, theta []float64) error, diverged func(t int) error) error {
	theta := make([]float64, p.Dim)
	scratch := make([]float64, p.GradNormScratch())
	bound := explosion * (1 + model.Norm(p.LeastSquares))
	for t := 1; t <= rounds; t++ {
		if err := ctx.Err(); err != nil {
			return err
		}
		if err := round(t, theta); err != nil {
			return err
		}
		r := Round{Index: t, Theta: append([]float64(nil), theta...),
			GradNorm: p.GradNorm(theta, scratch), EstError: p.EstError(theta), ClientError: p.ClientError(theta)}
		if !finite(theta) || !(r.EstError < bound) {
			return diverged(t)
		}
		emit(r)
	}
	return nil
}

func finite(x []float64) bool {
	for _, v := range x {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return false
		}
	}
	return true
}
