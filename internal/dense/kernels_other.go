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

func gemm4x8AccAVX2(int, *float64, int, *float64, int, *[32]float64) { panic("dense: no AVX2 kernels") }

func colAdd4AVX2(int, *float64, int, *float64, int, *[4]float64) { panic("dense: no AVX2 kernels") }

func colSub4AVX2(int, *float64, int, *float64, int, *[4]float64) { panic("dense: no AVX2 kernels") }

func colAdd8AVX2(int, *float64, int, *float64, int, *[8]float64) { panic("dense: no AVX2 kernels") }

func colSub8AVX2(int, *float64, int, *float64, int, *[8]float64) { panic("dense: no AVX2 kernels") }

func colAdd12AVX2(int, *float64, int, *float64, int, *[12]float64) { panic("dense: no AVX2 kernels") }

func colSub12AVX2(int, *float64, int, *float64, int, *[12]float64) { panic("dense: no AVX2 kernels") }

func lanesDot8AVX2(int, int, *float64, *float64, int, *[8]float64) { panic("dense: no AVX2 kernels") }

func cosineAVX2(int, *float64, *float64, float64, *[20]float64) { panic("dense: no AVX2 kernels") }

func dotStagedAVX2(int, *float64, *float64, *float64, *float64, *float64, *[16]float64) {
	panic("dense: no AVX2 kernels")
}

func gemvN8AVX2(int, *float64, int, *float64, *[32]float64) { panic("dense: no AVX2 kernels") }

func gemvTBlockAVX2(int, int, *float64, int, *float64, *float64) { panic("dense: no AVX2 kernels") }
