// Package dense holds the dense kernels of fedscope's numerical work: the
// Gram and kernel matrices of many rows (symmetric rank-k updates), dot
// products, and the triangular products and solves of a Cholesky factor.
// Every kernel is serial; callers split the rows of the output into tasks
// and run them on all cores (internal/parallel sits on the same floor, so
// this package does not import it).
//
// Every kernel documents the order in which each output entry is summed,
// and that order is independent of the blocking, of the number of CPUs and
// of the instruction set: a sum is the same bits whichever way the output
// is tiled. Where a kernel replaces one of gonum's, it sums in gonum's
// order (for example the four partial sums of gonum's SSE2 dot product), so
// that fedscope's output does not change by a bit when it is swapped in.
//
// On amd64 with AVX2 the innermost loops are Go assembly that works on four
// output entries at once (four lanes of a 256-bit register), with
// separate multiplications and additions and never a fused multiply-add.
// The pure-Go loops beside them compute the same thing in the same order and
// write every product as float64(x*y), which the Go specification forbids
// the compiler to fuse with the following addition, so they give the same
// bytes on every platform (fusion is the default on arm64, ppc64 and s390x,
// and on amd64 from GOAMD64=v3). Tests check the two paths against each
// other bit for bit, and both against gonum and naive loops.
package dense
