#!/usr/bin/env python3
"""Time two commands side by side in alternating pairs: A, B, A, B, … (after warm-up runs), so that
both see the same machine load. Prints each command's median wall and CPU time (user + system of
the process and its children) and the median and range of the per-pair ratio B/A.

Usage: python3 bench/pairs.py [-n PAIRS] [-w WARMUP] -- COMMAND-A -- COMMAND-B
Example (bench/README.md):
  python3 bench/pairs.py -n 21 -- ./fedscope run --preset paradox --out /tmp/go.csv \\
      -- env OPENBLAS_NUM_THREADS=1 python3 bench/paradox_numpy.py --out /tmp/np.csv
"""
import os
import statistics
import sys
import time


def timed(cmd):
    start = time.perf_counter()
    pid = os.fork()
    if pid == 0:
        try:
            os.execvp(cmd[0], cmd)
        finally:
            os._exit(127)
    _, status, ru = os.wait4(pid, 0)
    wall = time.perf_counter() - start
    if os.waitstatus_to_exitcode(status) != 0:
        sys.exit(f"{' '.join(cmd)}: exit status {os.waitstatus_to_exitcode(status)}")
    return wall, ru.ru_utime + ru.ru_stime


def main():
    args = sys.argv[1:]
    pairs, warmup = 21, 3
    while args and args[0] != "--":
        flag, value = args[0], int(args[1])
        args = args[2:]
        if flag == "-n":
            pairs = value
        elif flag == "-w":
            warmup = value
        else:
            sys.exit(__doc__)
    if args.count("--") != 2:
        sys.exit(__doc__)
    cut = args.index("--", 1)
    a, b = args[1:cut], args[cut + 1:]
    for _ in range(warmup):
        timed(a)
        timed(b)
    ta, tb = [], []
    for _ in range(pairs):
        ta.append(timed(a))
        tb.append(timed(b))
    for name, t in (("A", ta), ("B", tb)):
        print(f"{name}: wall median {1e3 * statistics.median(x[0] for x in t):.1f} ms, "
              f"cpu median {1e3 * statistics.median(x[1] for x in t):.1f} ms  ({' '.join(a if name == 'A' else b)})")
    for what, k in (("wall", 0), ("cpu", 1)):
        r = sorted(y[k] / x[k] for x, y in zip(ta, tb))
        print(f"B/A {what}: median {statistics.median(r):.2f} over {pairs} pairs (min {r[0]:.2f}, max {r[-1]:.2f})")


if __name__ == "__main__":
    main()
