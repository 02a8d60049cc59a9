// Package cputime reads the process's CPU time, so that benchmarks can
// report CPU per operation beside wall time: on a busy machine the wall
// time depends on the other load, the CPU time much less.
package cputime
