#!/usr/bin/env python3
"""A careful numpy implementation of fedscope's `paradox` preset (paper 000, E000-1, docs/papers.md §1.9).

The same work as `fedscope run --preset paradox --out FILE`: draw M = 25 clients with d = 100 and
n_i = 500 (σ = 0.5, one common θ*), compute every client's Gram matrix X_iᵀX_i/n_i and X_iᵀy_i/n_i,
the pooled statistics and the pooled least-squares reference, then race FedAvg s = 1, 5, 10 and
FedProx (η = 0.1) for 150 rounds from θ_0 = 0, and write one CSV row per (racer, round) with
grad_norm = ‖2(Gθ − b)‖, est_error = ‖θ − θ*‖, client_error (empty: one truth) and ls_error.

Per-client Gram matrices, vectorised over the clients, with the tricks of the per-client
algorithm that pay in numpy:
  - each Gram matrix is one BLAS syrk (numpy calls it for X.T @ X);
  - FedAvg s = 1 is gradient descent on the pooled Gram matrix (docs/papers.md §1.3);
  - FedAvg s = 5 and 10 share one batched eigendecomposition (LAPACK syevd) of the clients'
    Gram matrices, after which s local steps are a diagonal map in each client's eigenbasis
    (two batched products per round instead of s);
  - FedProx uses (I + ηG_i)⁻¹ formed once per client (batched LAPACK) and one batched product
    per round.
Run it with one BLAS thread (faster than threaded BLAS at these sizes on two cores,
docs/performance.md). The random numbers come from numpy's generator, not fedscope's streams: the
same work, not the same digits.

Usage: OPENBLAS_NUM_THREADS=1 python3 bench/paradox_numpy.py [--out FILE] [--local-steps]
  --local-steps runs FedAvg's s gradient steps explicitly (s batched products per round)
  instead of the eigenbasis, for comparison.
"""
import sys

import numpy as np


def main():
    M, d, n, sigma, eta, T = 25, 100, 500, 0.5, 0.1, 150
    explicit = "--local-steps" in sys.argv
    rng = np.random.default_rng(1)
    theta_star = rng.standard_normal(d)
    X = rng.standard_normal((M, n, d))
    Y = X @ theta_star + sigma * rng.standard_normal((M, n))

    G = np.empty((M, d, d))
    for i in range(M):
        G[i] = X[i].T @ X[i]  # BLAS syrk
    G /= n
    b = np.matmul(X.transpose(0, 2, 1), Y[:, :, None])[:, :, 0] / n
    w = np.full(M, n / (M * n))
    Gp = np.tensordot(w, G, axes=1)
    bp = w @ b
    ls = np.linalg.solve(Gp, bp)
    ls_err = np.linalg.norm(ls - theta_star)

    def gd():  # FedAvg s = 1: gradient descent on the pooled loss
        theta = np.zeros(d)
        for _ in range(T):
            theta = theta - eta * (Gp @ theta - bp)
            yield theta

    lam, Q = (None, None) if explicit else np.linalg.eigh(G)
    Qt = None if explicit else Q.transpose(0, 2, 1).copy()
    Qtb = None if explicit else np.matmul(Qt, b[:, :, None])[:, :, 0]

    def fedavg(s):
        theta = np.zeros(d)
        if explicit:
            for _ in range(T):
                U = np.broadcast_to(theta, (M, d)).copy()
                for _ in range(s):
                    U -= eta * (np.matmul(G, U[:, :, None])[:, :, 0] - b)
                theta = w @ U
                yield theta
            return
        mult = (1 - eta * lam) ** s
        add = (1 - mult) / lam * Qtb
        for _ in range(T):
            z = mult * (Qt @ theta) + add
            theta = w @ np.matmul(Q, z[:, :, None])[:, :, 0]
            yield theta

    def fedprox():
        B = np.linalg.inv(np.eye(d)[None, :, :] + eta * G)
        c = eta * np.matmul(B, b[:, :, None])[:, :, 0]
        theta = np.zeros(d)
        for _ in range(T):
            theta = w @ (np.matmul(B, theta) + c)
            yield theta

    rows = ["algorithm,round,grad_norm,est_error,client_error,ls_error"]
    for label, racer in (("FedAvg s=1", gd()), ("FedAvg s=5", fedavg(5)),
                         ("FedAvg s=10", fedavg(10)), ("FedProx", fedprox())):
        for t, theta in enumerate(racer, 1):
            g = np.linalg.norm(2 * (Gp @ theta - bp))
            e = np.linalg.norm(theta - theta_star)
            rows.append(f"{label},{t},{g:.17g},{e:.17g},,{ls_err:.17g}")
    out = sys.stdout
    if "--out" in sys.argv:
        out = open(sys.argv[sys.argv.index("--out") + 1], "w")
    out.write("\n".join(rows) + "\n")


if __name__ == "__main__":
    main()
