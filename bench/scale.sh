#!/usr/bin/env bash
# The scaling table of bench/README.md: setup time, rounds per second of the
# four paradox racers and peak memory over M × d × n, one process per case.
# Cases over datasets.MaxEntries (M·n·d > 5·10⁷ numbers) are refused by
# fedscope and skipped here; FEDSCOPE_BENCH_HUGE=1 also runs the ones whose
# setup takes minutes (M·n·d·min(n, d) > 2·10⁹).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
bin=$(mktemp -d)/scale
go build -o "$bin" ./bench/scale
for m in 25 250 2500 10000; do
	for d in 10 100 400; do
		for n in 50 500; do
			if (( m * n * d > 50000000 )); then
				echo "M=$m d=$d n=$n  over the data limit (M·n·d > 5·10⁷)"
				continue
			fi
			if (( m * n * d * (n < d ? n : d) > 2000000000 )) && [[ -z "${FEDSCOPE_BENCH_HUGE:-}" ]]; then
				echo "M=$m d=$d n=$n  skipped (set FEDSCOPE_BENCH_HUGE=1)"
				continue
			fi
			"$bin" -clients "$m" -dim "$d" -samples "$n"
		done
	done
done
