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

// LinearRound is what FedAvg and FedProx report after one communication
// round on the linear model of paper 000. It is passed by value with fresh
// slices, so a receiver may keep it. Each family of algorithms has its own
// round type (RidgeRound, EpochRound, ClusterRound) holding only what it
// measures, so that no field means different things in different families.
type LinearRound struct {
	Index    int       // t = 1, 2, …
	Theta    []float64 // global model θ_t
	GradNorm float64   // ‖∇l(θ_t)‖, l = (1/N) Σ‖y_i − X_i θ‖² (docs/papers.md §1.2)
	EstError float64   // ‖θ_t − θ*‖
	// ClientError is Σ w_i ‖θ_t − θ_i*‖ under model heterogeneity, NaN when
	// every client shares one truth (it then equals EstError).
	ClientError float64
}

// Algorithm is one racer: a federated method with its parameters.
type Algorithm interface {
	// Run iterates `rounds` communication rounds from θ_0 = 0 (docs/papers.md §8).
	Run(ctx context.Context, p *model.Problem, rounds int, emit func(LinearRound)) error
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
func loop(ctx context.Context, p *model.Problem, rounds int, emit func(LinearRound),
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
		r := LinearRound{Index: t, Theta: append([]float64(nil), theta...),
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
