//go:build !noasm

package model

// useAVX reports whether dot24 may use dot24AVX: the CPU has AVX2 and FMA
// and the operating system saves the YMM registers.
var useAVX = func() bool {
	_, _, c1, _ := cpuid(1, 0)
	const fma, osxsave, avx = 1 << 12, 1 << 27, 1 << 28
	if c1&(fma|osxsave|avx) != fma|osxsave|avx {
		return false
	}
	if lo, _ := xgetbv(); lo&6 != 6 { // XMM and YMM state enabled
		return false
	}
	_, b7, _, _ := cpuid(7, 0)
	return b7&(1<<5) != 0 // AVX2
}()

// dot24AVX accumulates, for i < n (a multiple of 4), x0[i]·y_k[i] into
// acc[4k : 4k+4] and x1[i]·y_k[i] into acc[16+4k : 16+4k+4] by lanes (i mod
// 4), with fused multiply-adds: the inner loop of the Gram kernel at four
// indices per instruction (gram_amd64.s).
//
//go:noescape
func dot24AVX(x0, x1, y0, y1, y2, y3 *float64, n int, acc *[32]float64)

func cpuid(eax, ecx uint32) (a, b, c, d uint32)
func xgetbv() (eax, edx uint32)
