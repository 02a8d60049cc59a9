#!/usr/bin/env python3
"""A careful numpy/scipy implementation of fedscope's KRR sweeps (paper 003, docs/papers.md §4).

The same work as `fedscope sweep --preset newton-heterogeneity` (or `newton-local-size`, or
`newton-heterogeneity --set sweep=beta`) with the preset's trials: for every grid value and trial,
draw the synthetic federation (d = 10, |D_j| = 500 or |D|/m, noise variance 0.2, 2500 test points),
map it to M = 200 random Fourier features (σ² = 10), and with λ = 1e-4:

  - per client H_j = Φ_jᵀΦ_j/|D_j| + λI factorised by Cholesky (|D_j| ≥ M), or, for smaller
    clients, the |D_j|×|D_j| system nλI + Φ_jΦ_jᵀ of the Woodbury form, as fedscope does;
    the pooled H from the pooled Gram matrix;
  - FedNewton's contraction factor Υ by the same Lanczos process (H inner product, full
    reorthogonalisation, stopping at the same 1e-4 accuracy);
  - Δ_Dj by 100 power iterations on H − H_j per client and Δ_fj (heterogeneity sweeps only);
  - KRR and DKRR; FedNewton for 8 rounds (test MSE after 1, 2, 4, 8); FedAvg (η = 0.001, s = 2)
    and FedProx (λ_prox = 7e-5, its own Cholesky factor per client) for 8 rounds; the test MSE
    of every racer and a divergence check against W_KRR.

Where a shortcut gives the same numbers a careful numpy user would take it: FedNewton's global
gradient is H·W − b with the pooled H (fedscope sums the clients' H_j·W − b_j), the power
iterations use the dense difference H − H_j, batched products are one BLAS call. The random
numbers come from numpy's generator: the same work, not the same digits.

Run it with one BLAS thread (OPENBLAS_NUM_THREADS=1), as bench/README.md explains. It prints one
line per (grid value): the mean test MSE of each racer over the trials, Υ and the axis statistic.

Usage: OPENBLAS_NUM_THREADS=1 python3 bench/newton_numpy.py [heterogeneity|beta|local-size] [--trials T]
"""
import sys

import numpy as np
from scipy.linalg import cho_factor, cho_solve, eigh_tridiagonal

D, M, SIGMA2, LAM, NOISE_VAR, TEST = 10, 200, 10.0, 1e-4, 0.2, 2500
ETA, STEPS, MU, ROUNDS = 0.001, 2, 7e-5, 8
NEWTON_T = (1, 2, 4, 8)


def federation(rng, sizes, alpha, beta):
    """Client j: shift u_j ~ N(0, αI), model w_j ~ N(1, βI), x ~ N(u_j, I), y = −|w_jᵀx| + e."""
    m = len(sizes)
    clients, tests, models = [], [], []
    for j, n in enumerate(sizes):
        u = np.sqrt(alpha) * rng.standard_normal(D)
        w = 1 + np.sqrt(beta) * rng.standard_normal(D)
        nt = TEST // m + (1 if j < TEST % m else 0)
        x = u + rng.standard_normal((n + nt, D))
        y = -np.abs(x @ w) + np.sqrt(NOISE_VAR) * rng.standard_normal(n + nt)
        clients.append((x[:n], y[:n]))
        tests.append((x[n:], y[n:]))
        models.append(w)
    xt = np.concatenate([t[0] for t in tests])
    yt = np.concatenate([t[1] for t in tests])
    return clients, (xt, yt), models


class Client:
    """H_j = ΦᵀΦ/n + λI: primal Cholesky (n ≥ M) or the Woodbury form (n < M)."""

    def __init__(self, phi, y, lam):
        n = phi.shape[0]
        self.n, self.lam, self.b = n, lam, phi.T @ y / n
        if n >= M:
            self.gram = phi.T @ phi / n
            self.phi = None
            self.fac = cho_factor(self.gram + lam * np.eye(M))
        else:
            self.gram = None
            self.phi = phi
            self.kern = phi @ phi.T
            self.fac = cho_factor(self.kern + n * lam * np.eye(n))

    def mul(self, w):
        if self.phi is None:
            return self.gram @ w + self.lam * w
        return self.phi.T @ (self.phi @ w) / self.n + self.lam * w

    def solve(self, v):
        if self.phi is None:
            return cho_solve(self.fac, v)
        return (v - self.phi.T @ cho_solve(self.fac, self.phi @ v)) / self.lam

    def shifted(self, mu):
        """The operator of H_j + μI (FedProx's local system)."""
        c = Client.__new__(Client)
        c.n, c.lam, c.b = self.n, self.lam + mu, self.b
        c.gram, c.phi = self.gram, self.phi
        if self.phi is None:
            c.fac = cho_factor(self.gram + c.lam * np.eye(M))
        else:
            c.kern = self.kern
            c.fac = cho_factor(self.kern + self.n * c.lam * np.eye(self.n))
        return c


def contraction(h_mul, a_mul, tol=1e-4, max_steps=200):
    """Υ = max(1 − μ_min, μ_max − 1) over the eigenvalues μ of AH, A = Σ p_j H_j⁻¹, by Lanczos in
    the H inner product with full reorthogonalisation (fedscope's model.contraction)."""
    rng = np.random.default_rng(1)
    v = rng.standard_normal(M)
    hv = h_mul(v)
    nrm = np.sqrt(v @ hv)
    q, hq = [v / nrm], [hv / nrm]
    alpha, beta = [], []
    while True:
        k = len(q)
        z = a_mul(hq[-1])
        alpha.append(hq[-1] @ z)
        Q, HQ = np.array(q), np.array(hq)
        for _ in range(2):
            z = z - Q.T @ (HQ @ z)
        hz = h_mul(z)
        b = np.sqrt(max(z @ hz, 0.0))
        if k <= 60 or k % 5 == 0 or k == max_steps or b == 0:
            if k == 1:
                th, s = np.array(alpha), np.ones((1, 1))
            else:
                th, s = eigh_tridiagonal(np.array(alpha), np.array(beta))
            lo, hi = 1 - th[0], th[-1] - 1
            ups = max(lo, hi)

            def bound(res, gap):
                return min(res, res * res / gap) if gap > res else res

            res_lo = bound(b * abs(s[-1, 0]), th[1] - th[0]) if k > 1 else b
            res_hi = bound(b * abs(s[-1, -1]), th[-1] - th[-2]) if k > 1 else b
            err, other, res_other = (res_hi, lo, res_lo) if hi > lo else (res_lo, hi, res_hi)
            converged = k >= 2 and err <= tol * max(1, ups) and other + res_other <= ups
            if converged or b <= 1e-13 * max(1, abs(alpha[-1])) or k >= max_steps:
                return ups
        beta.append(b)
        q.append(z / b)
        hq.append(hz / b)


def trial(rng, sizes, alpha, beta, heterogeneity):
    clients, (xt, yt), models = federation(rng, sizes, alpha, beta)
    omega = rng.standard_normal((D, M)) / np.sqrt(SIGMA2)
    phase = 2 * np.pi * rng.random(M)

    def features(x):
        return np.cos(x @ omega + phase) / np.sqrt(M)

    phis = [features(x) for x, _ in clients]
    ops = [Client(phi, y, LAM) for phi, (_, y) in zip(phis, clients)]
    n_all = sum(sizes)
    p = np.array(sizes) / n_all
    phi_all = np.concatenate(phis)
    h = phi_all.T @ phi_all / n_all + LAM * np.eye(M)
    b = sum(pj * op.b for pj, op in zip(p, ops))
    h_fac = cho_factor(h)
    phi_t = features(xt)

    def mse(w):
        return np.mean((phi_t @ w - yt) ** 2)

    def a_mul(v):
        return sum(pj * op.solve(v) for pj, op in zip(p, ops))

    ups = contraction(lambda v: h @ v, a_mul)
    extra = [ups, sizes[0]]
    if heterogeneity:
        dd = 0.0
        for j, op in enumerate(ops):
            diff = h - (op.gram + LAM * np.eye(M) if op.phi is None else op.phi.T @ op.phi / op.n + LAM * np.eye(M))
            v = np.random.default_rng([2, j]).standard_normal(M)
            lam = 0.0
            for _ in range(100):
                v = v / np.linalg.norm(v)
                v = diff @ v
                lam = np.linalg.norm(v)
            dd += p[j] * lam
        df = 0.0
        for j, (x, _) in enumerate(clients):
            df += p[j] * abs(np.mean(-np.abs(x.sum(axis=1)) + np.abs(x @ models[j])))
        extra = [ups, dd, df]

    w_krr = cho_solve(h_fac, b)
    w_dkrr = sum(pj * op.solve(op.b) for pj, op in zip(p, ops))
    bound = 100 * max(np.linalg.norm(w_dkrr - w_krr), 1e-6 * (1 + np.linalg.norm(w_krr)))

    def race(step):
        w, out = w_dkrr.copy(), []
        for _ in range(ROUNDS):
            w = step(w)
            if not np.all(np.isfinite(w)) or not np.linalg.norm(w - w_krr) <= bound:
                out += [np.inf] * (ROUNDS - len(out))
                break
            out.append(mse(w))
        return out

    def newton(w):
        return w - a_mul(h @ w - b)

    def fedavg(w):
        nxt = np.zeros(M)
        for pj, op in zip(p, ops):
            u = w.copy()
            for _ in range(STEPS):
                u = u - ETA * (op.mul(u) - op.b)
            nxt += pj * u
        return nxt

    prox = [op.shifted(MU) for op in ops]

    def fedprox(w):
        return sum(pj * op.solve(op.b + MU * w) for pj, op in zip(p, prox))

    nt = race(newton)
    row = [mse(w_krr), mse(w_dkrr)] + [nt[t - 1] for t in NEWTON_T] + [race(fedavg)[-1], race(fedprox)[-1]]
    return row, extra


def main():
    args = sys.argv[1:]
    kind = args[0] if args and not args[0].startswith("--") else "heterogeneity"
    trials = int(args[args.index("--trials") + 1]) if "--trials" in args else 10
    if kind == "local-size":
        grid, heterogeneity = [5, 10, 20, 25, 40, 50, 80, 100, 125], False
    elif kind == "beta":
        grid, heterogeneity = [0, 1e-4, 3e-4, 1e-3, 3e-3, 1e-2, 3e-2, 0.1], True
    else:
        grid, heterogeneity = [0, 0.001, 0.003, 0.01, 0.03, 0.1, 0.3, 1], True
    labels = ["KRR", "DKRR"] + [f"FedNewton t={t}" for t in NEWTON_T] + ["FedAvg s=2", "FedProx"]
    print("value," + ",".join(labels) + ",contraction," + ("delta_data,delta_model" if heterogeneity else "local_size"))
    for value in grid:
        rows, extras = [], []
        for t in range(trials):
            rng = np.random.default_rng([1 + t, int(value * 1e6)])
            if kind == "local-size":
                sizes, alpha, beta = [10000 // value] * value, 0.0, 0.0
            elif kind == "beta":
                sizes, alpha, beta = [500] * 20, 0.0, value
            else:
                sizes, alpha, beta = [500] * 20, value, 0.0
            row, extra = trial(rng, sizes, alpha, beta, heterogeneity)
            rows.append(row)
            extras.append(extra)
        r, e = np.array(rows), np.array(extras)
        means = [np.mean(c[np.isfinite(c)]) if np.isfinite(c).any() else np.nan for c in r.T]
        print(f"{value}," + ",".join(f"{x:.6g}" for x in means) + "," + ",".join(f"{x:.6g}" for x in e.mean(axis=0)))


if __name__ == "__main__":
    main()
