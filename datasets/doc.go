// Package datasets builds federations of clients for the experiments of the
// five seed papers summarised in docs/papers.md: synthetic generators with their
// heterogeneity knobs, and the seeded randomness that makes every run
// reproducible.
//
// Every random draw comes from the scenario seed. Client i draws from its own
// stream rand.NewPCG(seed, i+1) and the shared truth from stream 0, so results
// do not depend on the order or the parallelism in which clients are built.
package datasets
