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
	scaled, sigma := symEigenScale(n, a, lda, work)
	inde, indtau, indwork := 0, n, 2*n
	llwork := lwork - indwork
	lapackImpl.Dsytrd(blas.Upper, n, a, lda, w, work[inde:], work[indtau:], work[indwork:], llwork)
	lapackImpl.Dorgtr(blas.Upper, n, a, lda, work[indtau:], work[indwork:], llwork)
	ldz := (n + 3) &^ 3
	zt := ws.transpose(n, a, lda, ldz)
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

// symEigenScale scales the matrix (upper triangle) as Dsyev does when its
// largest magnitude lies outside [√(smlnum), √(bignum)], where the
// eigenvalues could underflow or overflow, and returns whether it did and
// by what factor.
func symEigenScale(n int, a []float64, lda int, work []float64) (scaled bool, sigma float64) {
	const (
		safmin = 0x1p-1022
		eps    = 0x1p-52
		smlnum = safmin / eps
		bignum = 1 / smlnum
	)
	rmin, rmax := math.Sqrt(smlnum), math.Sqrt(bignum)
	anrm := lapackImpl.Dlansy(lapack.MaxAbs, blas.Upper, n, a, lda, work)
	if anrm > 0 && anrm < rmin {
		scaled, sigma = true, rmin/anrm
	} else if anrm > rmax {
		scaled, sigma = true, rmax/anrm
	}
	if scaled {
		lapackImpl.Dlascl(lapack.UpperTri, 0, 0, 1, sigma, n, n, a, lda)
	}
	return scaled, sigma
}

// transpose returns ws.zt set to Zᵀ for the n×n Z in a (stride lda), with
// rows padded to ldz, a multiple of four numbers (zeros, which the
// rotations keep at zero), so that the rotations need no tail.
func (ws *EigenWork) transpose(n int, a []float64, lda, ldz int) []float64 {
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
	return zt
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

// The constants of gonum's Dsteqr: its eps is half of SymEigen's.
const (
	steqrEps    = 0x1p-53
	steqrEps2   = steqrEps * steqrEps
	steqrSafmin = 0x1p-1022
	steqrSafmax = 1 / steqrSafmin
	steqrMaxit  = 30 // QL/QR steps allowed per eigenvalue
)

// steqrScaling records how steqrT scaled the current block (gonum's
// scaletype): none yet, down into ssfmax or up into ssfmin.
type steqrScaling int

const (
	steqrDown steqrScaling = iota + 1
	steqrUp
)

// steqrT is gonum's Dsteqr with compz = lapack.EVOrig, written for the
// transpose zt of the orthogonal matrix Z (so that a rotation of two columns
// of Z is one of two rows of zt); every arithmetic operation is gonum's, in
// gonum's order. It splits the tridiagonal matrix into unreduced blocks,
// scales each into a safe range, runs the QL or the QR iteration on it
// (whichever starts from the end of smaller magnitude), scales it back,
// and finally sorts the eigenvalues.
//
// Copyright ©2016 The Gonum Authors. All rights reserved. Use of this
// source code is governed by the BSD-style license of gonum
// (gonum.org/v1/gonum, LICENSE): this function and the steqr helpers below
// are a modified copy of gonum's lapack/gonum/dsteqr.go.
func steqrT(n int, d, e, zt []float64, ldz int, work []float64) (ok bool) {
	if n == 1 {
		return true
	}
	ssfmax := math.Sqrt(steqrSafmax) / 3
	ssfmin := math.Sqrt(steqrSafmin) / steqrEps2
	nmaxit := n * steqrMaxit
	jtot := 0
	l1 := 0
	// Like gonum, iscale is not reset between blocks.
	var iscale steqrScaling
	for {
		if l1 > n-1 {
			steqrSort(n, d, zt, ldz)
			return true
		}
		m := steqrSplit(d, e, l1, n-1)
		l := l1
		lsv := l
		lend := m
		lendsv := lend
		l1 = m + 1
		if lend == l {
			continue
		}
		anorm := lapackImpl.Dlanst(lapack.MaxAbs, lend-l+1, d[l:], e[l:])
		if anorm == 0 {
			continue
		}
		iscale = steqrScale(iscale, anorm, ssfmin, ssfmax, lend-l, d[l:], e[l:])
		// Choose between QL and QR.
		if math.Abs(d[lend]) < math.Abs(d[l]) {
			lend = lsv
			l = lendsv
		}
		if lend > l {
			jtot = steqrQL(n, d, e, zt, ldz, work, l, lend, jtot, nmaxit)
		} else {
			jtot = steqrQR(n, d, e, zt, ldz, work, l, lend, jtot, nmaxit)
		}
		steqrUnscale(iscale, anorm, ssfmin, ssfmax, lendsv-lsv, d[lsv:], e[lsv:])
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

// steqrSplit zeroes the off-diagonal entry before row l1 and returns the
// end m of the unreduced block that starts at l1: the first m ≥ l1 whose
// e[m] is zero or negligible (then set to zero), or nm1.
func steqrSplit(d, e []float64, l1, nm1 int) int {
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
			if test <= (math.Sqrt(math.Abs(d[m]))*math.Sqrt(math.Abs(d[m+1])))*steqrEps {
				e[m] = 0
				break
			}
		}
	}
	return m
}

// steqrScale scales the block of diagonal d[:nm+1] and off-diagonal
// e[:nm] whose largest magnitude is anorm into [ssfmin, ssfmax] when it
// lies outside, and returns the scaling to undo (iscale when none).
func steqrScale(iscale steqrScaling, anorm, ssfmin, ssfmax float64, nm int, d, e []float64) steqrScaling {
	switch {
	case anorm > ssfmax:
		iscale = steqrDown
		lapackImpl.Dlascl(lapack.General, 0, 0, anorm, ssfmax, nm+1, 1, d, 1)
		lapackImpl.Dlascl(lapack.General, 0, 0, anorm, ssfmax, nm, 1, e, 1)
	case anorm < ssfmin:
		iscale = steqrUp
		lapackImpl.Dlascl(lapack.General, 0, 0, anorm, ssfmin, nm+1, 1, d, 1)
		lapackImpl.Dlascl(lapack.General, 0, 0, anorm, ssfmin, nm, 1, e, 1)
	}
	return iscale
}

// steqrUnscale undoes steqrScale on the block d[:nm+1], e[:nm].
func steqrUnscale(iscale steqrScaling, anorm, ssfmin, ssfmax float64, nm int, d, e []float64) {
	switch iscale {
	case steqrDown:
		lapackImpl.Dlascl(lapack.General, 0, 0, ssfmax, anorm, nm+1, 1, d, 1)
		lapackImpl.Dlascl(lapack.General, 0, 0, ssfmax, anorm, nm, 1, e, 1)
	case steqrUp:
		lapackImpl.Dlascl(lapack.General, 0, 0, ssfmin, anorm, nm+1, 1, d, 1)
		lapackImpl.Dlascl(lapack.General, 0, 0, ssfmin, anorm, nm, 1, e, 1)
	}
}

// steqrQL runs the QL iteration on the block l…lend (l < lend), deflating
// eigenvalues at its top, until all have converged or the iteration count
// jtot reaches nmaxit; it returns the new count.
func steqrQL(n int, d, e, zt []float64, ldz int, work []float64, l, lend, jtot, nmaxit int) int {
	for {
		// Look for small subdiagonal element.
		m := lend
		if l != lend {
			for m = l; m < lend; m++ {
				v := math.Abs(e[m])
				if v*v <= (steqrEps2*math.Abs(d[m]))*math.Abs(d[m+1])+steqrSafmin {
					break
				}
			}
		}
		if m < lend {
			e[m] = 0
		}
		if m == l {
			// Eigenvalue found.
			l++
			if l > lend {
				return jtot
			}
			continue
		}
		// If remaining matrix is 2×2, use Dlae2 to compute its eigensystem.
		if m == l+1 {
			d[l], d[l+1], work[l], work[n-1+l] = lapackImpl.Dlaev2(d[l], e[l], d[l+1])
			rotRows(ldz, zt[l*ldz:], ldz, work[l:], work[n-1+l:], 1, true)
			e[l] = 0
			l += 2
			if l > lend {
				return jtot
			}
			continue
		}
		if jtot == nmaxit {
			return jtot
		}
		jtot++
		steqrQLStep(n, d, e, zt, ldz, work, l, m)
	}
}

// steqrQLStep is one implicit shifted QL step on rows l…m, with its plane
// rotations applied to zt.
func steqrQLStep(n int, d, e, zt []float64, ldz int, work []float64, l, m int) {
	p := d[l]
	// Form shift
	g := (d[l+1] - p) / (2 * e[l])
	r := lapackImpl.Dlapy2(g, 1)
	g = d[m] - p + e[l]/(g+math.Copysign(r, g))
	s := 1.0
	c := 1.0
	p = 0.0

	// Inner loop
	for i := m - 1; i >= l; i-- {
		f := s * e[i]
		b := c * e[i]
		c, s, r = lapackImpl.Dlartg(g, f)
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

// steqrQR runs the QR iteration on the block lend…l (lend < l), deflating
// eigenvalues at its bottom, until all have converged or the iteration
// count jtot reaches nmaxit; it returns the new count.
func steqrQR(n int, d, e, zt []float64, ldz int, work []float64, l, lend, jtot, nmaxit int) int {
	for {
		// Look for small superdiagonal element.
		m := lend
		if l != lend {
			for m = l; m > lend; m-- {
				v := math.Abs(e[m-1])
				if v*v <= (steqrEps2*math.Abs(d[m])*math.Abs(d[m-1]) + steqrSafmin) {
					break
				}
			}
		}
		if m > lend {
			e[m-1] = 0
		}
		if m == l {
			// Eigenvalue found
			l--
			if l < lend {
				return jtot
			}
			continue
		}
		// If remaining matrix is 2×2, use Dlae2 to compute its eigenvalues.
		if m == l-1 {
			d[l-1], d[l], work[m], work[n-1+m] = lapackImpl.Dlaev2(d[l-1], e[l-1], d[l])
			rotRows(ldz, zt[(l-1)*ldz:], ldz, work[m:], work[n-1+m:], 1, false)
			e[l-1] = 0
			l -= 2
			if l < lend {
				return jtot
			}
			continue
		}
		if jtot == nmaxit {
			return jtot
		}
		jtot++
		steqrQRStep(n, d, e, zt, ldz, work, l, m)
	}
}

// steqrQRStep is one implicit shifted QR step on rows m…l, with its plane
// rotations applied to zt.
func steqrQRStep(n int, d, e, zt []float64, ldz int, work []float64, l, m int) {
	p := d[l]
	// Form shift.
	g := (d[l-1] - p) / (2 * e[l-1])
	r := lapackImpl.Dlapy2(g, 1)
	g = d[m] - p + (e[l-1])/(g+math.Copysign(r, g))
	s := 1.0
	c := 1.0
	p = 0.0

	// Inner loop.
	for i := m; i < l; i++ {
		f := s * e[i]
		b := c * e[i]
		c, s, r = lapackImpl.Dlartg(g, f)
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

// steqrSort orders the eigenvalues d ascending by selection sort, swapping
// the rows of zt with them, as gonum does.
func steqrSort(n int, d, zt []float64, ldz int) {
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
}
