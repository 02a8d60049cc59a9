//go:build !amd64 || noasm

package model

// useAVX is false off amd64 (or with the noasm tag): dot24 sums in Go.
const useAVX = false

func dot24AVX(x0, x1, y0, y1, y2, y3 *float64, n int, acc *[32]float64) {
	panic("model: dot24AVX without AVX")
}
