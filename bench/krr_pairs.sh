#!/usr/bin/env bash
# fedscope against its numpy/scipy reference on the KRR sweeps of paper 003
# (bench/README.md): every sweep at the preset's trials, fedscope's `sweep`
# and bench/newton_numpy.py with one BLAS thread run alternately
# (bench/pairs.py), CPU seconds of each whole process.
#
#   bash bench/krr_pairs.sh [PAIRS]        # default 3 pairs per sweep
#
# PYTHON names the interpreter with numpy and scipy (default /usr/bin/python3,
# where Debian's python3-numpy and python3-scipy install them).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
pairs=${1:-3}
py=${PYTHON:-/usr/bin/python3}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
go build -o "$tmp/fedscope" .
for sweep in heterogeneity beta local-size; do
	case $sweep in
	heterogeneity) args=(--preset newton-heterogeneity) ;;
	beta) args=(--preset newton-heterogeneity --set sweep=beta) ;;
	local-size) args=(--preset newton-local-size) ;;
	esac
	echo "== $sweep: A = fedscope sweep ${args[*]}, B = numpy"
	python3 bench/pairs.py -n "$pairs" -w 0 \
		-- sh -c "\"$tmp/fedscope\" sweep ${args[*]} --out \"$tmp/go.csv\" 2>/dev/null" \
		-- sh -c "OPENBLAS_NUM_THREADS=1 OMP_NUM_THREADS=1 MKL_NUM_THREADS=1 \"$py\" bench/newton_numpy.py $sweep >\"$tmp/np.csv\""
done
