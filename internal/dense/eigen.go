package dense

import (
	"math"

	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/lapack"
	"gonum.org/v1/gonum/lapack/gonum"
)

// lapackImpl is gonum's pure-Go LAPACK, whose routines SymEigen calls
// except the QL/QR iteration.
var lapackImpl gonum.Implementation

// EigenWork is scratch memory for SymEigen; one serves one goroutine.
type EigenWork struct {
	work, zt []float64
}

// SymEigen computes all eigenvalues (w, ascending) and eigenvectors (the
// columns of a, row-major, stride lda) of the symmetric n×n matrix whose
// upper triangle a holds, with the same bits as gonum's
// Dsyev(lapack.EVCompute, blas.Upper, …) given its optimal workspace: the
// same scaling, Householder tridiagonalisation (Dsytrd) and orthogonal
// matrix (Dorgtr), then the implicit QL/QR iteration of gonum's Dsteqr on
// the transpose of that matrix, so that each plane rotation of the
// eigenvectors combines two contiguous rows, four numbers per AVX2
// instruction, instead of two columns. It reports false when the iteration
// did not converge.
func SymEigen(n int, a []float64, lda int, w []float64, ws *EigenWork) bool {
	if n == 0 {
		return true
	}
	if len(a) < (n-1)*lda+n || len(w) < n {
		panic("dense: SymEigen: slice too short")
	}
	if n == 1 {
		w[0] = a[0]
		a[0] = 1
		return true
	}
	nb := lapackImpl.Ilaenv(1, "DSYTRD", "U", n, -1, -1, -1)
	lwork := max(1, (nb+2)*n)
	if cap(ws.work) < lwork {
		ws.work = make([]float64, lwork)
	}
	work := ws.work[:lwork]

	const (
		safmin = 0x1p-1022
		eps    = 0x1p-52
		smlnum = safmin / eps
		bignum = 1 / smlnum
	)
	rmin, rmax := math.Sqrt(smlnum), math.Sqrt(bignum)
	anrm := lapackImpl.Dlansy(lapack.MaxAbs, blas.Upper, n, a, lda, work)
	scaled := false
	var sigma float64
	if anrm > 0 && anrm < rmin {
		scaled, sigma = true, rmin/anrm
	} else if anrm > rmax {
		scaled, sigma = true, rmax/anrm
	}
	if scaled {
		lapackImpl.Dlascl(lapack.UpperTri, 0, 0, 1, sigma, n, n, a, lda)
	}
	inde, indtau, indwork := 0, n, 2*n
	llwork := lwork - indwork
	lapackImpl.Dsytrd(blas.Upper, n, a, lda, w, work[inde:], work[indtau:], work[indwork:], llwork)
	lapackImpl.Dorgtr(blas.Upper, n, a, lda, work[indtau:], work[indwork:], llwork)
	// zt = Zᵀ with rows padded to a multiple of four numbers (zeros, which
	// the rotations keep at zero), so that the rotations need no tail.
	ldz := (n + 3) &^ 3
	if cap(ws.zt) < n*ldz {
		ws.zt = make([]float64, n*ldz)
	}
	zt := ws.zt[:n*ldz]
	for j := 0; j < n; j++ {
		row := zt[j*ldz : (j+1)*ldz]
		for i := 0; i < n; i++ {
			row[i] = a[i*lda+j]
		}
		clear(row[n:])
	}
	ok := steqrT(n, w, work[inde:], zt, ldz, work[indtau:])
	for i := 0; i < n; i++ {
		for j := 0; j < n; j++ {
			a[i*lda+j] = zt[j*ldz+i]
		}
	}
	if !ok {
		return false
	}
	if scaled {
		inv := 1 / sigma
		for i := range w[:n] {
			w[i] *= inv
		}
	}
	return true
}

// TridiagEigenLast computes the eigenvalues of the symmetric tridiagonal
// n×n matrix with diagonal d and off-diagonal e (both overwritten; d gets
// the eigenvalues in ascending order) and the last component of each
// eigenvector (last[j] for eigenvalue d[j]), with the same bits as gonum's
// Dsteqr(lapack.EVTridiag, …) gives for them. Every plane rotation of the
// QL/QR iteration acts on each row of the eigenvector matrix on its own, so
// the last row is carried alone (O(n) a sweep instead of O(n²)). work
// holds 2n numbers. It reports false when the iteration did not converge.
func TridiagEigenLast(n int, d, e, last, work []float64) bool {
	if n == 0 {
		return true
	}
	// zt is Zᵀ cut to Z's last row: row j of zt is the one number Z[n−1][j],
	// starting from the identity's last row.
	clear(last[:n])
	last[n-1] = 1
	if n == 1 {
		return true
	}
	return steqrT(n, d, e, last[:n], 1, work)
}

// rotRows applies the plane rotations j = j0, j0+1, … (forward) or the
// other way round (backward), count of them, to the pairs of rows (j, j+1)
// of the n-column row-major zt (stride ldz): with t = zt[j+1][i] and
// t2 = zt[j][i], zt[j+1][i] = c_j·t − s_j·t2 and zt[j][i] = s_j·t + c_j·t2,
// skipping the rotations with c_j = 1 and s_j = 0 — gonum's Dlasr(Right,
// Variable, …) on the columns of zt's transpose.
func rotRows(n int, zt []float64, ldz int, c, s []float64, count int, backward bool) {
	n4 := 0
	if useAVX2 {
		n4 = n / 4
	}
	c, s = c[:count], s[:count]
	for t := 0; t < count; t++ {
		j := t
		if backward {
			j = count - 1 - t
		}
		ct, st := c[j], s[j]
		if ct == 1 && st == 0 {
			continue
		}
		x, y := zt[j*ldz:j*ldz+n], zt[(j+1)*ldz:(j+1)*ldz+n]
		if n4 > 0 {
			rotAVX2(n4, &x[0], &y[0], ct, st)
		}
		for i := 4 * n4; i < n; i++ {
			tmp, tmp2 := y[i], x[i]
			y[i] = float64(ct*tmp) - float64(st*tmp2)
			x[i] = float64(st*tmp) + float64(ct*tmp2)
		}
	}
}

// steqrT is gonum's Dsteqr with compz = lapack.EVOrig, written for the
// transpose zt of the orthogonal matrix Z (so that a rotation of two columns
// of Z is one of two rows of zt); every arithmetic operation is gonum's, in
// gonum's order.
//
// Copyright ©2016 The Gonum Authors. All rights reserved. Use of this
// source code is governed by the BSD-style license of gonum
// (gonum.org/v1/gonum, LICENSE): this function is a modified copy of
// gonum's lapack/gonum/dsteqr.go.
func steqrT(n int, d, e, zt []float64, ldz int, work []float64) (ok bool) {
	impl := lapackImpl
	if n == 1 {
		return true
	}
	const (
		eps    = 0x1p-53
		eps2   = eps * eps
		safmin = 0x1p-1022
		safmax = 1 / safmin
	)
	ssfmax := math.Sqrt(safmax) / 3
	ssfmin := math.Sqrt(safmin) / eps2

	const maxit = 30
	nmaxit := n * maxit
	jtot := 0
	l1 := 0
	nm1 := n - 1

	type scaletype int
	const (
		down scaletype = iota + 1
		up
	)
	var iscale scaletype

	for {
		if l1 > n-1 {
			// Order eigenvalues and eigenvectors.
			for ii := 1; ii < n; ii++ {
				i := ii - 1
				k := i
				p := d[i]
				for j := ii; j < n; j++ {
					if d[j] < p {
						k = j
						p = d[j]
					}
				}
				if k != i {
					d[k] = d[i]
					d[i] = p
					ri, rk := zt[i*ldz:(i+1)*ldz], zt[k*ldz:(k+1)*ldz]
					for c := range ri {
						ri[c], rk[c] = rk[c], ri[c]
					}
				}
			}
			return true
		}
		if l1 > 0 {
			e[l1-1] = 0
		}
		var m int
		if l1 <= nm1 {
			for m = l1; m < nm1; m++ {
				test := math.Abs(e[m])
				if test == 0 {
					break
				}
				if test <= (math.Sqrt(math.Abs(d[m]))*math.Sqrt(math.Abs(d[m+1])))*eps {
					e[m] = 0
					break
				}
			}
		}
		l := l1
		lsv := l
		lend := m
		lendsv := lend
		l1 = m + 1
		if lend == l {
			continue
		}

		// Scale submatrix in rows and columns L to Lend
		anorm := impl.Dlanst(lapack.MaxAbs, lend-l+1, d[l:], e[l:])
		switch {
		case anorm == 0:
			continue
		case anorm > ssfmax:
			iscale = down
			impl.Dlascl(lapack.General, 0, 0, anorm, ssfmax, lend-l+1, 1, d[l:], 1)
			impl.Dlascl(lapack.General, 0, 0, anorm, ssfmax, lend-l, 1, e[l:], 1)
		case anorm < ssfmin:
			iscale = up
			impl.Dlascl(lapack.General, 0, 0, anorm, ssfmin, lend-l+1, 1, d[l:], 1)
			impl.Dlascl(lapack.General, 0, 0, anorm, ssfmin, lend-l, 1, e[l:], 1)
		}

		// Choose between QL and QR.
		if math.Abs(d[lend]) < math.Abs(d[l]) {
			lend = lsv
			l = lendsv
		}
		if lend > l {
			// QL Iteration. Look for small subdiagonal element.
			for {
				if l != lend {
					for m = l; m < lend; m++ {
						v := math.Abs(e[m])
						if v*v <= (eps2*math.Abs(d[m]))*math.Abs(d[m+1])+safmin {
							break
						}
					}
				} else {
					m = lend
				}
				if m < lend {
					e[m] = 0
				}
				p := d[l]
				if m == l {
					// Eigenvalue found.
					l++
					if l > lend {
						break
					}
					continue
				}

				// If remaining matrix is 2×2, use Dlae2 to compute its eigensystem.
				if m == l+1 {
					d[l], d[l+1], work[l], work[n-1+l] = impl.Dlaev2(d[l], e[l], d[l+1])
					rotRows(ldz, zt[l*ldz:], ldz, work[l:], work[n-1+l:], 1, true)
					e[l] = 0
					l += 2
					if l > lend {
						break
					}
					continue
				}

				if jtot == nmaxit {
					break
				}
				jtot++

				// Form shift
				g := (d[l+1] - p) / (2 * e[l])
				r := impl.Dlapy2(g, 1)
				g = d[m] - p + e[l]/(g+math.Copysign(r, g))
				s := 1.0
				c := 1.0
				p = 0.0

				// Inner loop
				for i := m - 1; i >= l; i-- {
					f := s * e[i]
					b := c * e[i]
					c, s, r = impl.Dlartg(g, f)
					if i != m-1 {
						e[i+1] = r
					}
					g = d[i+1] - p
					r = (d[i]-g)*s + 2*c*b
					p = s * r
					d[i+1] = g + p
					g = c*r - b

					// Save rotations.
					work[i] = c
					work[n-1+i] = -s
				}
				// Apply saved rotations.
				mm := m - l + 1
				rotRows(ldz, zt[l*ldz:], ldz, work[l:], work[n-1+l:], mm-1, true)
				d[l] -= p
				e[l] = g
			}
		} else {
			// QR Iteration.
			// Look for small superdiagonal element.
			for {
				if l != lend {
					for m = l; m > lend; m-- {
						v := math.Abs(e[m-1])
						if v*v <= (eps2*math.Abs(d[m])*math.Abs(d[m-1]) + safmin) {
							break
						}
					}
				} else {
					m = lend
				}
				if m > lend {
					e[m-1] = 0
				}
				p := d[l]
				if m == l {
					// Eigenvalue found
					l--
					if l < lend {
						break
					}
					continue
				}

				// If remaining matrix is 2×2, use Dlae2 to compute its eigenvalues.
				if m == l-1 {
					d[l-1], d[l], work[m], work[n-1+m] = impl.Dlaev2(d[l-1], e[l-1], d[l])
					rotRows(ldz, zt[(l-1)*ldz:], ldz, work[m:], work[n-1+m:], 1, false)
					e[l-1] = 0
					l -= 2
					if l < lend {
						break
					}
					continue
				}
				if jtot == nmaxit {
					break
				}
				jtot++

				// Form shift.
				g := (d[l-1] - p) / (2 * e[l-1])
				r := impl.Dlapy2(g, 1)
				g = d[m] - p + (e[l-1])/(g+math.Copysign(r, g))
				s := 1.0
				c := 1.0
				p = 0.0

				// Inner loop.
				for i := m; i < l; i++ {
					f := s * e[i]
					b := c * e[i]
					c, s, r = impl.Dlartg(g, f)
					if i != m {
						e[i-1] = r
					}
					g = d[i] - p
					r = (d[i+1]-g)*s + 2*c*b
					p = s * r
					d[i] = g + p
					g = c*r - b

					// Save rotations.
					work[i] = c
					work[n-1+i] = s
				}

				// Apply saved rotations.
				mm := l - m + 1
				rotRows(ldz, zt[m*ldz:], ldz, work[m:], work[n-1+m:], mm-1, false)
				d[l] -= p
				e[l-1] = g
			}
		}

		// Undo scaling if necessary.
		switch iscale {
		case down:
			impl.Dlascl(lapack.General, 0, 0, ssfmax, anorm, lendsv-lsv+1, 1, d[lsv:], 1)
			impl.Dlascl(lapack.General, 0, 0, ssfmax, anorm, lendsv-lsv, 1, e[lsv:], 1)
		case up:
			impl.Dlascl(lapack.General, 0, 0, ssfmin, anorm, lendsv-lsv+1, 1, d[lsv:], 1)
			impl.Dlascl(lapack.General, 0, 0, ssfmin, anorm, lendsv-lsv, 1, e[lsv:], 1)
		}

		// Check for no convergence to an eigenvalue after a total of n*maxit iterations.
		if jtot >= nmaxit {
			break
		}
	}
	for i := 0; i < n-1; i++ {
		if e[i] != 0 {
			return false
		}
	}
	return true
}
