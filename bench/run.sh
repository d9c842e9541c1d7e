#!/usr/bin/env bash
# bench/run.sh: git-rally's speed against its bars (issue 2, item 8).
#
# Builds git-rally and the helper bench/cmd/rallybench, creates ledgers of
# 1k, 10k and 100k facts in temporary repositories, and times, as whole
# processes, medians of RUNS rounds (each round runs every case once, so a
# noisy neighbour hurts all cases alike):
#
#   git rally claim            against the git plumbing floor doing the same
#                              append (hash-object -w, mktree per tree level,
#                              commit-tree, update-ref with the old value)
#   git rally room --json      (warm cache) against git rev-parse refs/rally/ledger
#   in-process append          (diagnostic) and an O_APPEND+fsync of one line
#                              to a plain file, the absolute floor
#
# in four scenarios: "plain" (a repository holding only the ledger, its
# objects as rally leaves them: packed in the background past 4096 loose), "tidy" (the same with a room whose
# projection does not grow: every handoff resolved, no new sessions), "bighist" (the same ledger inside a
# repository with a large packed history made with git fast-import) and
# "gc" (bighist after `git gc`, which packs the ledger into the big pack
# and its ref into packed-refs; every append there starts from the packed
# head). Then it prints the ratios against the bars:
#   claim <= 0.7x floor; room <= 10x rev-parse and < 30 ms at 100k;
#   claim at 100k <= 1.2x claim at 1k.
#
# Every round runs every case on every repository in turn, so drift over the
# run falls on all of them alike.
#
# Usage: bench/run.sh            (about 4-8 minutes on 2 cores)
#        RUNS=61 SIZES="1000 10000" bench/run.sh
# Everything lives under one temporary directory, removed on exit
# (KEEP=1 keeps it).
set -euo pipefail

RUNS=${RUNS:-41}
SIZES=${SIZES:-"1000 10000 100000"}
HIST_COMMITS=${HIST_COMMITS:-25000}
# Every ledger ends with its head segment half full (128 of 256 facts): an
# append rewrites that segment's tree, so its cost follows the fill, and the
# gc scenario appends to one fixed head again and again.
HEAD_FILL=${HEAD_FILL:-128}

root=$(cd "$(dirname "$0")/.." && pwd)
work=$(mktemp -d "${TMPDIR:-/tmp}/rally-bench.XXXXXX")
cleanup() {
	if [ "${KEEP:-}" = 1 ]; then echo "kept $work"; else rm -rf "$work"; fi
}
trap cleanup EXIT

# A private git environment: no user or system config, a fixed identity.
# Go keeps its caches where they were.
export GOPATH=$(go env GOPATH) GOCACHE=$(go env GOCACHE) GOMODCACHE=$(go env GOMODCACHE)
export HOME=$work/home
mkdir -p "$HOME"
export GIT_CONFIG_NOSYSTEM=1 GIT_CONFIG_GLOBAL=/dev/null
export GIT_AUTHOR_NAME=bench GIT_AUTHOR_EMAIL=bench@example.com
export GIT_COMMITTER_NAME=bench GIT_COMMITTER_EMAIL=bench@example.com
unset RALLY_NOW RALLY_TOOL RALLY_SESSION GIT_DIR GIT_WORK_TREE
# The ledgers are built packed, as rally's background pack leaves them; the
# timed runs do not start that background pack themselves, so a repack of
# the whole ledger never runs beside a measurement.
export RALLY_AUTOPACK=0

now_ms() { echo $(($(date +%s%N) / 1000000)); }
start=$(now_ms)
bin=$work/bin
# git-rally is built as the README installs it: static (CGO_ENABLED=0).
(cd "$root" && CGO_ENABLED=0 go build -o "$bin/git-rally" ./cmd/git-rally && go build -o "$bin/rallybench" ./bench/cmd/rallybench)
export PATH=$bin:$PATH

label() {
	case $1 in
	1000) echo 1k ;; 10000) echo 10k ;; 100000) echo 100k ;; *) echo "$1" ;;
	esac
}
secs_since() { awk -v a="$1" -v b="$(now_ms)" 'BEGIN { printf "%.1f s", (b - a) / 1000 }'; }
objects() { git -C "$1" count-objects -v | awk '/^count:/{l=$2} /^in-pack:/{p=$2} /^size-pack:/{s=$2} END {printf "%d loose, %d packed objects, packs %.1f MB", l, p, s/1024}'; }

echo "# git-rally benchmark, $(date -u +%Y-%m-%dT%H:%M:%SZ)"
echo "# $(cd "$root" && git rev-parse --short HEAD 2>/dev/null || echo '?') on $(uname -sr), $(nproc) cores, $(go version | cut -d' ' -f3), $(git --version)"
echo "# load average at start: $(cut -d' ' -f1-3 /proc/loadavg); medians of $RUNS rounds"
echo

echo "## Ledgers"
echo "Built in-process through the real append path (bench/ledgergen: facts.Open + Ledger.Append with a"
echo "fixed clock set to each commit's last fact time, up to 100 facts per commit), a simulated room of"
echo "12 agents: presence and leave, claims and releases, notes, decisions, handoffs answered by receipts"
echo "and resolves (a few never), artifacts and risks, about one fact a minute with quiet stretches."
echo "Loose objects are packed whenever they pass 4096, as rally's appends do in the background."
# build <scenario> <size> [flags]: a repository with a generated ledger.
build() {
	local sc=$1 n=$2 l d t
	shift 2
	l=$(label "$n")
	d=$work/$sc-$l
	git init -q "$d"
	(cd "$d" && git rally init >/dev/null)
	t=$(now_ms)
	echo "- $l $sc: $(rallybench build -dir "$d" -facts "$n" -seed "$n" -head-fill "$HEAD_FILL" "$@")"
	echo "  build $(secs_since "$t"); $(objects "$d"), .git $(du -sh "$d/.git" | cut -f1)"
}
for n in $SIZES; do build plain "$n"; done
echo "Tidy variants (scenario \"tidy\", plain repositories): the same room, but every handoff is"
echo "resolved and no agent starts a new session, so the projection (room state) stays the same size."
for n in $SIZES; do build tidy "$n" -tidy; done
echo

echo "## Large packed history (git fast-import)"
t=$(now_ms)
git init -q --bare "$work/hist"
rallybench history -commits "$HIST_COMMITS" -files 8 -blob-size 512 | git -C "$work/hist" fast-import --quiet
echo "- $HIST_COMMITS commits changing 8 files of 512 random bytes each: $(objects "$work/hist"); $(secs_since "$t")"
for n in $SIZES; do
	l=$(label "$n")
	b=$work/bighist-$l
	git init -q "$b"
	ln "$work"/hist/objects/pack/* "$b/.git/objects/pack/"
	git -C "$b" update-ref refs/heads/history "$(git -C "$work/hist" rev-parse refs/heads/main)"
	# The ledger's loose objects are immutable: hard links are safe. The
	# cache is rewritten in place: copy it.
	cp -al "$work/plain-$l/.git/objects/." "$b/.git/objects/"
	mkdir -p "$b/.git/refs/rally"
	cp "$work/plain-$l/.git/refs/rally/ledger" "$b/.git/refs/rally/ledger"
	cp -a "$work/plain-$l/.git/rally" "$b/.git/rally"
	g=$work/gc-$l
	git init -q "$g"
	cp -al "$b/.git/objects/." "$g/.git/objects/"
	git -C "$g" update-ref refs/heads/history "$(git -C "$work/hist" rev-parse refs/heads/main)"
	mkdir -p "$g/.git/refs/rally"
	cp "$b/.git/refs/rally/ledger" "$g/.git/refs/rally/ledger"
	cp -a "$b/.git/rally" "$g/.git/rally"
	t=$(now_ms)
	git -C "$g" gc --quiet
	echo "- bighist-$l: $(objects "$b"); after git gc ($(secs_since "$t")): $(objects "$g"), ledger ref $(if [ -f "$g/.git/refs/rally/ledger" ]; then echo loose; else echo packed; fi)"
done
echo

# Building wrote hundreds of MB; let the kernel write them back now, not
# during the first scenario's fsyncs.
sync

results=$work/results.txt
# One measure call for every scenario and size: each round runs every case
# on every repository in turn, so the machine's drift over the minutes of
# the run (write-back of what building wrote, a neighbour's load) falls on
# all of them alike instead of on whichever block ran first.
targets=()
for sc in plain tidy bighist gc; do
	for n in $SIZES; do
		l=$(label "$n")
		t="$sc:$l:$work/$sc-$l"
		[ "$sc" = gc ] && t="$t:reset-packed"
		targets+=(-target "$t")
	done
done
rallybench measure -bin "$bin/git-rally" -runs "$RUNS" -out "$results" "${targets[@]}"
echo

echo "## Summary (medians, ms)"
rallybench report -in "$results"
echo
echo "total $(secs_since "$start"); load average at end: $(cut -d' ' -f1-3 /proc/loadavg)"
