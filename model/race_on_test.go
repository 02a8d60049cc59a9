//go:build race

package model_test

// raceOn: the race detector makes sync.Pool drop items on purpose, so
// allocation counts mean nothing under it.
const raceOn = true
