#!/usr/bin/env bash
# bench/ab.sh: git-rally claim, as a whole process, built at two revisions
# and run alternately on copies of the same repository.
#
#   bench/ab.sh <rev-a> <rev-b> <repository> [runs]     (default 60 runs)
#   COPIES=4 (copies of the repository per revision)
#
# Each revision is built static (as the README installs it) from a
# throw-away worktree and gets its own copies of the repository (their
# caches may differ in version), each warmed up with one room. Then every
# run times one claim with a and one with b, in alternating order, each on
# its next copy (a release follows each, untimed), so a slow minute on the
# machine falls on both. Several copies, because two copies of one
# repository made seconds apart can differ by 40% on this file system
# (the same binary, 40 alternating claims: 9.0 against 6.3 ms).
# `bench/ab.sh HEAD HEAD <repo>` shows what is left of that. Prints the
# median, p10 and p90 of each and the ratio of the medians.
set -euo pipefail

if [ $# -lt 3 ]; then
	echo "usage: bench/ab.sh <rev-a> <rev-b> <repository> [runs]" >&2
	exit 2
fi
revs=("$1" "$2")
repo=$(cd "$3" && pwd)
runs=${4:-60}
copies=${COPIES:-4}
root=$(cd "$(dirname "$0")/.." && pwd)
work=$(mktemp -d "${TMPDIR:-/tmp}/rally-ab.XXXXXX")
trap 'rm -rf "$work"; git -C "$root" worktree prune' EXIT
export RALLY_AUTOPACK=0

for i in 0 1; do
	git -C "$root" worktree add -q --detach "$work/src$i" "${revs[$i]}"
	(cd "$work/src$i" && CGO_ENABLED=0 go build -o "$work/bin$i" ./cmd/git-rally)
done
for c in $(seq "$copies"); do
	for i in 0 1; do
		cp -a "$repo" "$work/repo$i-$c"
		(cd "$work/repo$i-$c" && "$work/bin$i" room >/dev/null)
	done
done
sync

for r in $(seq "$runs"); do
	order="0 1"
	[ $((r % 2)) = 0 ] && order="1 0" # who goes first alternates too
	c=$(((r - 1) % copies + 1))
	for i in $order; do
		cd "$work/repo$i-$c"
		s=$(date +%s%N)
		"$work/bin$i" claim "src/ab/$r.go" --tool bench:ab >/dev/null
		e=$(date +%s%N)
		echo "$i $(((e - s) / 1000))"
		"$work/bin$i" release "src/ab/$r.go" --tool bench:ab >/dev/null
	done
done >"$work/times"

for i in 0 1; do
	awk -v i="$i" '$1 == i { print $2 }' "$work/times" | sort -n >"$work/t$i"
done
stat() { awk '{ a[NR] = $1 } END { printf "%.2f %.2f %.2f", a[int((NR + 1) / 2)] / 1000, a[int(NR / 10) + 1] / 1000, a[int(NR * 9 / 10)] / 1000 }' "$1"; }
read -r m0 p10a p90a <<<"$(stat "$work/t0")"
read -r m1 p10b p90b <<<"$(stat "$work/t1")"
echo "git rally claim on $(basename "$repo"), $runs alternating runs each (ms: median p10 p90)"
echo "  a ${revs[0]}: $m0 $p10a $p90a"
echo "  b ${revs[1]}: $m1 $p10b $p90b"
awk -v a="$m0" -v b="$m1" 'BEGIN { printf "  b/a %.2fx\n", b / a }'
