#!/usr/bin/env bash
# bench/ab.sh: git-rally commands, as whole processes, built at two
# revisions and run alternately on copies of the same repository.
#
#   bench/ab.sh <rev-a> <rev-b> <repository> [runs]     (default 60 runs)
#   COPIES=4 (copies of the repository per revision)
#   CASES="claim version check room hook" (default: claim): the commands
#     agents run before every write; hook is `hook claude pre-tool-use`
#     with an Edit on stdin
#   CPU=1: compare CPU time (user + system, from wait4) instead of wall
#     time: steadier than wall time on a machine others load
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
cases=${CASES:-claim}
copies=${COPIES:-4}
root=$(cd "$(dirname "$0")/.." && pwd)
work=$(mktemp -d "${TMPDIR:-/tmp}/rally-ab.XXXXXX")
trap 'rm -rf "$work"; git -C "$root" worktree prune' EXIT
export RALLY_AUTOPACK=0

for i in 0 1; do
	git -C "$root" worktree add -q --detach "$work/src$i" "${revs[$i]}"
	(cd "$work/src$i" && CGO_ENABLED=0 go build -o "$work/bin$i" ./cmd/git-rally)
done
(cd "$root" && go build -o "$work/rallybench" ./bench/cmd/rallybench)
# one command's time in µs: wall, or with CPU=1 user + system
t() {
	"$work/rallybench" rusage "$@" | awk -v cpu="${CPU:-0}" '{ print int((cpu == 1 ? $3 : $1) / 1000) }'
}
for c in $(seq "$copies"); do
	for i in 0 1; do
		cp -a "$repo" "$work/repo$i-$c"
		(cd "$work/repo$i-$c" && "$work/bin$i" room >/dev/null)
	done
done
sync

hookin='{"session_id":"ab","hook_event_name":"PreToolUse","tool_name":"Edit","tool_input":{"file_path":"src/ab/hook.go"}}'
for r in $(seq "$runs"); do
	order="0 1"
	[ $((r % 2)) = 0 ] && order="1 0" # who goes first alternates too
	c=$(((r - 1) % copies + 1))
	for k in $cases; do
		for i in $order; do
			cd "$work/repo$i-$c"
			b="$work/bin$i"
			case $k in
			claim)
				us=$(t "$b" claim "src/ab/$r.go" --tool bench:ab)
				"$b" release "src/ab/$r.go" --tool bench:ab >/dev/null
				;;
			version) us=$(t "$b" version) ;;
			check) us=$(t "$b" check before-write "src/ab/$r.go" --tool bench:ab) ;;
			room) us=$(t "$b" room --json) ;;
			hook) us=$(RALLY_TOOL=bench:ab t "$b" hook claude pre-tool-use <<<"$hookin") ;;
			*)
				echo "unknown case $k" >&2
				exit 2
				;;
			esac
			echo "$k $i $us"
		done
	done
done >"$work/times"

stat() { awk '{ a[NR] = $1 } END { printf "%.2f %.2f %.2f", a[int((NR + 1) / 2)] / 1000, a[int(NR / 10) + 1] / 1000, a[int(NR * 9 / 10)] / 1000 }' "$1"; }
what="wall time"
[ "${CPU:-0}" = 1 ] && what="CPU time"
echo "git rally on $(basename "$repo"), $runs alternating runs each, $what (ms: median p10 p90)"
echo "  a ${revs[0]}"
echo "  b ${revs[1]}"
for k in $cases; do
	for i in 0 1; do
		awk -v k="$k" -v i="$i" '$1 == k && $2 == i { print $3 }' "$work/times" | sort -n >"$work/t$i"
	done
	read -r m0 p10a p90a <<<"$(stat "$work/t0")"
	read -r m1 p10b p90b <<<"$(stat "$work/t1")"
	awk -v k="$k" -v m0="$m0" -v m1="$m1" -v a="$p10a $p90a" -v b="$p10b $p90b" \
		'BEGIN { printf "  %-8s a %6.2f (%s)  b %6.2f (%s)  b/a %.3fx\n", k, m0, a, m1, b, m1 / m0 }'
done
