//go:build !amd64

package dense

// useAVX2 is false off amd64: the pure-Go kernels run.
var useAVX2 = false

func gemm4x8AVX2(int, *float64, int, *float64, int, *[32]float64) { panic("dense: no AVX2 kernels") }

func dot2x4AVX2(int, *float64, *float64, *float64, *float64, *float64, *float64, *[32]float64) {
	panic("dense: no AVX2 kernels")
}

func dot1x4AVX2(int, *float64, *float64, *float64, *float64, *float64, *[16]float64) {
	panic("dense: no AVX2 kernels")
}

func colAdd16AVX2(int, *float64, int, *float64, int, *[16]float64) { panic("dense: no AVX2 kernels") }

func colSub16AVX2(int, *float64, int, *float64, int, *[16]float64) { panic("dense: no AVX2 kernels") }

func rotAVX2(int, *float64, *float64, float64, float64) { panic("dense: no AVX2 kernels") }
