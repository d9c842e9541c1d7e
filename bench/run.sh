#!/usr/bin/env bash
# bench/run.sh: git-rally's speed against its bars (issue 14; issue 2, item 8, with ISSUE2=1).
#
# Builds git-rally, the helper bench/cmd/rallybench and a static Go hello
# world, creates ledgers of 1k, 10k and 100k facts in temporary
# repositories (built once per size, then copied for the other rows), and
# times whole processes, medians of RUNS rounds; each round runs every
# case on every repository once, so the machine's drift falls on all of
# them alike and the ratios (medians of per-round ratios) cancel it:
#
#   plain     git rally claim and git-rally claim (no wrapper) against two
#             git plumbing floors doing an append: issue 14's 4 processes
#             (hash-object -w, mktree of one entry, commit-tree -p,
#             update-ref new old) and issue 2's 7 (a mktree per tree level);
#             git-rally version against the hello world, and two start-up
#             probes (bench/probe, built in with -tags rallyprobe); room --json warm;
#             log --json -n 10 and room --json after deleting the cache,
#             with their max RSS (wait4); in-process append and fsync floor
#   open20, open1619   the same ledger with 20 and with 1,619 open claims:
#             room --json and claim
#   writers   8 git-rally processes x 200 appends each (claim, note, release,
#             note), background pack on; appends/s, p50/p99 latency; then
#             every acknowledged fact is in the ledger and git fsck passes
#   HOUSE=1   then issue 27's table: every hot command (claim, check,
#             room --json, the Claude and Codex pre-tool-use hooks, version)
#             built at BASE (default 9670970, main before the house issue)
#             against this tree, interleaved per round on copies of the
#             plain ledgers (ratio ≤ 1.03); git rally claim against git hello
#             (a static hello world as git-hello: git's wrapper included) plus
#             the in-process append (≤ 1.2); the hot binary's size (≤ 16 MB);
#             for information, git rallyappend (bench/cmd/rallyappend: the
#             same append in a static binary that links nothing else) beside
#             both, to split the gap into git-rally's own and a new process's;
#             and git rally claim, git hello and git rallyappend again, each
#             started under a timer slack of 5 ms (SLACK; 0: not), which shows
#             what the Go runtime's sysmon polls cost a process that lives
#             milliseconds (bench/README.md, "sysmon").
#             HOUSE=only skips everything else (only the plain ledgers are built)
#   ISSUE2=1  also issue 2's scenarios: tidy (a projection that does not
#             grow), bighist (the ledger beside a 140 MB packed history),
#             gc (bighist after git gc, every append from the packed head)
#
# The integrity checks stay on: every append ends with Store.Ensure, and
# every repository holds a fetched ledger (refs/rally-remotes/bench/ledger)
# that every read and append checks against rally/tracking before it reads.
# The report ends with one table: figure, 1k, 10k, 100k, bar, verdict.
#
# Usage: bench/run.sh            (3 minutes on a quiet 2-core machine, 8 on a loaded one;
#                                 progress per case and per round on stderr)
#        RUNS=61 SIZES="1000 10000" bench/run.sh
# Everything lives under one temporary directory, removed on exit
# (KEEP=1 keeps it).
set -euo pipefail

RUNS=${RUNS:-41}
HOUSE=${HOUSE:-0}
BASE=${BASE:-9670970}
HOUSE_RUNS=${HOUSE_RUNS:-$RUNS}
# the timer slack of the house table's sysmon rows (0: none)
SLACK=${SLACK:-5ms}
# copies of each ledger per binary in the house table, used in turn: with 2,
# one run measured claims and hooks at 1k 1.06-1.15x slower with the new binary,
# and 0.93-0.98x with 4 (copies made seconds apart differ, see bench/ab.sh)
HOUSE_COPIES=${HOUSE_COPIES:-4}
ISSUE2=${ISSUE2:-0}
# The writers (8 x 200 appends, many seconds) run in rounds 0, RUNS/2, ...
WRITERS_EVERY=${WRITERS_EVERY:-$(((RUNS + 1) / 2))}
# The room after deleting the cache (seconds at 100k) runs every 4th round.
COLD_EVERY=${COLD_EVERY:-4}
SIZES=${SIZES:-"1000 10000 100000"}
HIST_COMMITS=${HIST_COMMITS:-25000}
# Every ledger ends with its head segment half full (128 of 256 facts): an
# append rewrites that segment's tree, so its cost follows the fill, and the
# gc scenario appends to one fixed head again and again.
HEAD_FILL=${HEAD_FILL:-128}

root=$(cd "$(dirname "$0")/.." && pwd)
work=$(mktemp -d "${TMPDIR:-/tmp}/rally-bench.XXXXXX")
cleanup() {
	[ -d "$work/base-src" ] && git -C "$root" worktree remove --force "$work/base-src" 2>/dev/null
	git -C "$root" worktree prune 2>/dev/null || true
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
# The same binary with two start-up probes (bench/probe): it exits from an
# early package init, to show where a process's start-up goes.
(cd "$root" && CGO_ENABLED=0 go build -tags rallyprobe -o "$bin/git-rally-probe" ./cmd/git-rally)
# The floor of a Go process: a static hello world, built as git-rally is.
mkdir -p "$work/hello"
printf 'package main\n\nimport "fmt"\n\nfunc main() { fmt.Println("hello, world") }\n' >"$work/hello/main.go"
printf 'module hello\n\ngo 1.21\n' >"$work/hello/go.mod"
(cd "$work/hello" && CGO_ENABLED=0 GOFLAGS=-mod=mod go build -o "$bin/hello" .)
if [ "$HOUSE" != 0 ]; then
	# Issue 27: the base binary, built as this one is, from a throw-away
	# worktree; git-hello, the hello world under git's wrapper; the server
	# binary, for its size.
	git -C "$root" worktree add -q --detach "$work/base-src" "$BASE"
	mkdir -p "$work/base-bin" "$work/hello-bin"
	(cd "$work/base-src" && CGO_ENABLED=0 go build -o "$work/base-bin/git-rally" ./cmd/git-rally)
	(cd "$root" && CGO_ENABLED=0 go build -o "$bin/git-rally-server" ./cmd/git-rally-server)
	cp "$bin/hello" "$work/hello-bin/git-hello"
	# The append alone in a static binary of its own (for information).
	(cd "$root" && CGO_ENABLED=0 go build -o "$work/hello-bin/git-rallyappend" ./bench/cmd/rallyappend)
fi
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

scenarios="plain open20 open1619 writers"
[ "$ISSUE2" = 1 ] && scenarios="$scenarios tidy bighist gc"
[ "$HOUSE" = only ] && scenarios=""
build=$work/build
mkdir -p "$build"

echo "## Ledgers"
echo "Built in-process through the real append path (bench/ledgergen: ledger.Open + Ledger.Append with a"
echo "fixed clock set to each commit's last fact time, up to 100 facts per commit), a simulated room of"
echo "12 agents: presence and leave, claims and releases, notes, decisions, handoffs answered by receipts"
echo "and resolves (a few never), artifacts and risks, about one fact a minute with quiet stretches."
echo "Loose objects are packed whenever they pass 4096, as rally's appends do in the background."
# build <scenario> <size> [flags]: a repository with a generated ledger.
build() {
	local sc=$1 n=$2 l d t
	shift 2
	l=$(label "$n")
	d=$build/$sc-$l
	git init -q "$d"
	(cd "$d" && git rally init >/dev/null)
	t=$(now_ms)
	echo "- $l $sc: $(rallybench build -dir "$d" -facts "$n" -seed "$n" -head-fill "$HEAD_FILL" "$@")"
	echo "  build $(secs_since "$t"); $(objects "$d"), .git $(du -sh "$d/.git" | cut -f1)"
}
for n in $SIZES; do build plain "$n"; done

# copy <from> <to>: a repository with the same objects (hard links: git
# never changes an object file) and its own refs and rally directory.
copy() {
	mkdir -p "$2/.git"
	(cd "$1/.git" && for e in *; do [ "$e" = objects ] || cp -a "$e" "$2/.git/"; done)
	cp -al "$1/.git/objects" "$2/.git/objects"
}
[ "$HOUSE" = only ] || echo "Open claims (scenarios \"open20\", \"open1619\"): copies of the plain ledgers, then claims"
[ "$HOUSE" = only ] || echo "released or added (distinct files, the room's tools) until 20, or 1,619, are open, in commits of"
[ "$HOUSE" = only ] || echo "up to 100 facts, and the head segment filled again."
[ "$HOUSE" = only ] || for n in $SIZES; do
	l=$(label "$n")
	for oc in 20 1619; do
		copy "$build/plain-$l" "$build/open$oc-$l"
		t=$(now_ms)
		echo "- $l open$oc: $(rallybench build -dir "$build/open$oc-$l" -facts 0 -open-claims "$oc" -head-fill "$HEAD_FILL")"
		echo "  $(secs_since "$t"); $(objects "$build/open$oc-$l")"
	done
	copy "$build/plain-$l" "$build/writers-$l"
done
[ "$HOUSE" = only ] || echo "Writers (scenario \"writers\"): copies of the plain ledgers."

if [ "$ISSUE2" = 1 ]; then
echo "Tidy variants (scenario \"tidy\", plain repositories): the same room, but every handoff is"
echo "resolved and no agent starts a new session, so the projection (room state) stays the same size."
for n in $SIZES; do build tidy "$n" -tidy; done
echo

echo "## Large packed history (git fast-import)"
t=$(now_ms)
git init -q --bare "$build/hist"
rallybench history -commits "$HIST_COMMITS" -files 8 -blob-size 512 | git -C "$build/hist" fast-import --quiet
echo "- $HIST_COMMITS commits changing 8 files of 512 random bytes each: $(objects "$build/hist"); $(secs_since "$t")"
for n in $SIZES; do
	l=$(label "$n")
	b=$build/bighist-$l
	git init -q "$b"
	ln "$build"/hist/objects/pack/* "$b/.git/objects/pack/"
	git -C "$b" update-ref refs/heads/history "$(git -C "$build/hist" rev-parse refs/heads/main)"
	# The ledger's loose objects are immutable: hard links are safe. The
	# cache is rewritten in place: copy it.
	cp -al "$build/plain-$l/.git/objects/." "$b/.git/objects/"
	mkdir -p "$b/.git/refs/rally"
	cp "$build/plain-$l/.git/refs/rally/ledger" "$b/.git/refs/rally/ledger"
	cp -a "$build/plain-$l/.git/rally" "$b/.git/rally"
	g=$build/gc-$l
	git init -q "$g"
	cp -al "$b/.git/objects/." "$g/.git/objects/"
	git -C "$g" update-ref refs/heads/history "$(git -C "$build/hist" rev-parse refs/heads/main)"
	mkdir -p "$g/.git/refs/rally"
	cp "$b/.git/refs/rally/ledger" "$g/.git/refs/rally/ledger"
	cp -a "$b/.git/rally" "$g/.git/rally"
	t=$(now_ms)
	git -C "$g" gc --quiet
	echo "- bighist-$l: $(objects "$b"); after git gc ($(secs_since "$t")): $(objects "$g"), ledger ref $(if [ -f "$g/.git/refs/rally/ledger" ]; then echo loose; else echo packed; fi)"
done
echo

fi

# Building packed and deleted hundreds of thousands of loose objects. On
# an ext4 without a journal (this machine's), for a minute or more after
# an inode is freed every file created in its block group scans past it:
# 0.4-0.7 ms per file instead of 0.01-0.05 ms, and an append creates ten
# files. The repositories measured are therefore fresh copies, each in a
# block group of its own (chattr +T on the work directory makes ext4
# spread the directories made in it), so only what a case does itself,
# the writers' background pack too, weighs on it.
echo "## Repositories measured"
if chattr +T "$work" 2>/dev/null; then
	echo "Fresh copies of the ledgers built (objects hard-linked, refs and rally/ copied), each spread by ext4 into"
	echo "a block group of its own (chattr +T on the work directory), away from the inodes building freed."
else
	echo "Fresh copies of the ledgers built (objects hard-linked, refs and rally/ copied); chattr +T failed, so they may"
	echo "share block groups with the inodes building freed (ext4 without a journal: slower file creation for minutes)."
fi
for sc in $scenarios; do
	for n in $SIZES; do
		l=$(label "$n")
		copy "$build/$sc-$l" "$work/$sc-$l"
	done
done
house_targets=()
if [ "$HOUSE" != 0 ]; then
	for n in $SIZES; do
		l=$(label "$n")
		# A round uses copy c of both sides; made one after the other, the
		# two copies of a pair meet the same file-creation costs (bench/README.md,
		# "Why copies differ").
		for c in $(seq "$HOUSE_COPIES"); do
			for side in base new; do
				copy "$build/plain-$l" "$work/house-$side$c-$l"
				house_targets+=(-target "$l:$side:$work/house-$side$c-$l")
			done
		done
	done
fi
echo

# The integrity checks are on in every measurement: a fetched ledger
# (an older head of the same ledger, as a teammate's clone would have it)
# sits in every repository, so every read and append checks it against
# rally/tracking first; the first read here merges it (nothing new).
for d in "$work"/{plain,open20,open1619,writers,tidy,bighist,gc,house-base?,house-new?}-*; do
	[ -d "$d/.git" ] || continue
	git -C "$d" update-ref refs/rally-remotes/bench/ledger "$(git -C "$d" rev-parse refs/rally/ledger~1)"
	r=git-rally
	case $d in */house-base*) r=$work/base-bin/git-rally ;; esac
	(cd "$d" && "$r" room --json >/dev/null)
	grep -q '^refs/rally-remotes/bench/ledger ' "$d/.git/rally/tracking"
done
echo "Integrity checks on: Store.Ensure after every append; a fetched ledger refs/rally-remotes/bench/ledger"
echo "in every repository, checked against rally/tracking before every read and append."
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
for sc in $scenarios; do
	for n in $SIZES; do
		l=$(label "$n")
		t="$sc:$l:$work/$sc-$l"
		[ "$sc" = gc ] && t="$t:reset-packed"
		targets+=(-target "$t")
	done
done
if [ -n "$scenarios" ]; then
rallybench measure -bin "$bin/git-rally" -hello "$bin/hello" -probe "$bin/git-rally-probe" -runs "$RUNS" -cold-every "$COLD_EVERY" \
	-writers-every "$WRITERS_EVERY" -out "$results" "${targets[@]}"
echo

echo "## Summary (medians, ms)"
rallybench report -in "$results"
echo
fi
if [ "$HOUSE" != 0 ]; then
	echo "## Issue 27 (BASE=$BASE, $(git -C "$root" rev-parse --short "$BASE"); load average before: $(cut -d' ' -f1-3 /proc/loadavg))"
	# Copies of each binary too, used in turn: where a binary's text lands in
	# the page cache made one 3-7% slower than an identical one for a whole run.
	house_bins=()
	for c in $(seq "$HOUSE_COPIES"); do
		mkdir -p "$work/house-bin/base$c" "$work/house-bin/new$c"
		cp "$work/base-bin/git-rally" "$work/house-bin/base$c/"
		cp "$bin/git-rally" "$work/house-bin/new$c/"
		house_bins+=(-base "$work/house-bin/base$c" -new "$work/house-bin/new$c")
	done
	rallybench house "${house_bins[@]}" -hello "$work/hello-bin" -server "$bin/git-rally-server" \
		-base-rev "$BASE" -runs "$HOUSE_RUNS" -slack "$SLACK" "${house_targets[@]}"
	echo
fi
echo "total $(secs_since "$start"); load average at end: $(cut -d' ' -f1-3 /proc/loadavg)"
