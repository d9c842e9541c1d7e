#!/usr/bin/env bash
# bench/scale.sh: git-rally at a million facts (issue 31), against git's
# own figures measured in the same run.
#
# Builds one ledger of N facts (default 1,000,000) as rally writes them:
# the first N - TAIL as one commit in rally's layout (rallybench bulk: a
# fast-import stream of facts sealed as rally seals them, a fact every 10 s,
# claims, releases and notes of 20 agents, facts/YYYY-MM/DD/NNNN/<id>.json
# by each fact's day, segments of 256, each full one's segment blob
# NNNN.jsonl beside it as an append writes it), then TAIL (default 10,000) real
# appends, one commit each (rallybench build -max-batch 1: ledger.Ledger.Append,
# a simulated room), then `git gc` (packed as a clone receives it). A 1k
# ledger made the same way is the warm claim's reference. COMMITS=all
# writes the first N - TAIL facts one commit each instead, as rally's
# appends write them (rallybench bulk -commits: an init commit, then a
# commit per fact, trees and segment blobs as an append makes them): the
# history of a team that wrote N facts, N commits long.
#
# Then, RUNS times each (medians), every command timed as a whole process
# with its max RSS (wait4, through `rallybench rusage`):
#   git rev-list --count refs/rally/ledger    (baseline of the cold room)
#   room --json after deleting the cache      (cold)
#   the same from a trusted signed checkpoint (git rally checkpoint, its
#     key in rally.checkpointSigner; bar: 4x rev-list)
#   claim, warm, at N and at 1k               (ratio)
#   log --json -n 10, show <id>               (warm)
#   doctor                                    (once; DOCTOR=0 skips it)
#   doctor with signing configured            (an allowed-signers file,
#     rally.sign, rally.requireSigned, user.signingKey: the ledger's facts
#     are unsigned, which costs what signed ones do to verify and count;
#     first with no verdicts recorded, then again; SIGNED=0 skips it)
#   every read command and hook, once each, max RSS at N and at 1k
#     (issue 31: any command's peak RSS grows with the open state, not
#     with the history; COMMANDS=0 skips it)
#   a fresh clone: plain `git fetch` of the ledger ref (baseline) against
#   `init --remote` + `git fetch` + the first room, and the same in a
#   clone that trusts the origin's checkpoint
#   sync of SYNC (10,000) new facts appended at the origin
# and prints the table of issue 31 with bars and verdicts. The load
# average is printed at the start and the end: quote it with any figure.
#
# Usage: bench/scale.sh                     (1M facts: about 15-30 min on 2 cores)
#        N=100000 bench/scale.sh            (the 100k figures: cold room ≤ 1 s, ≤ 100 MiB)
# Knobs: N, TAIL, SYNC, RUNS (3), COMMITS (all: a commit per fact), DOCTOR (1), SIGNED (1), COMMANDS (1), KEEP (1 keeps the work directory),
# LEDGER (a directory kept from an earlier run with KEEP=1: reuse its ledgers),
# SYNC_ONLY (1: only the sync, RUNS times, into a copy of the big ledger
# standing for the clone, its tracking ref at the origin's head; with
# LEDGER, minutes instead of the cold reads' and clones' half hour).
set -euo pipefail

N=${N:-1000000}
TAIL=${TAIL:-10000}
SYNC=${SYNC:-10000}
RUNS=${RUNS:-3}
DOCTOR=${DOCTOR:-1}
SYNC_ONLY=${SYNC_ONLY:-0}
SIGNED=${SIGNED:-1}
COMMANDS=${COMMANDS:-1}
COMMITS=${COMMITS:-one}
if [ "$DOCTOR" != 1 ] || ! command -v ssh-keygen >/dev/null; then SIGNED=0; fi

root=$(cd "$(dirname "$0")/.." && pwd)
work=$(mktemp -d "${TMPDIR:-/tmp}/rally-scale.XXXXXX")
cleanup() {
	if [ "${KEEP:-}" = 1 ]; then echo "kept $work"; else rm -rf "$work"; fi
}
trap cleanup EXIT

export GOPATH=$(go env GOPATH) GOCACHE=$(go env GOCACHE) GOMODCACHE=$(go env GOMODCACHE)
export HOME=$work/home
mkdir -p "$HOME"
export GIT_CONFIG_NOSYSTEM=1 GIT_CONFIG_GLOBAL=/dev/null
export GIT_AUTHOR_NAME=bench GIT_AUTHOR_EMAIL=bench@example.com
export GIT_COMMITTER_NAME=bench GIT_COMMITTER_EMAIL=bench@example.com
unset RALLY_NOW RALLY_TOOL RALLY_SESSION GIT_DIR GIT_WORK_TREE
export RALLY_AUTOPACK=0

bin=$work/bin
(cd "$root" && CGO_ENABLED=0 go build -o "$bin/git-rally" ./cmd/git-rally && go build -o "$bin/rallybench" ./bench/cmd/rallybench)
export PATH=$bin:$PATH
rally=$bin/git-rally

now_ms() { echo $(($(date +%s%N) / 1000000)); }
secs_since() { awk -v a="$1" -v b="$(now_ms)" 'BEGIN { printf "%.1f s", (b - a) / 1000 }'; }

echo "# git-rally at scale, $(date -u +%Y-%m-%dT%H:%M:%SZ)"
echo "# $(cd "$root" && git rev-parse --short HEAD 2>/dev/null || echo '?') on $(uname -sr), $(nproc) cores, $(go version | cut -d' ' -f3), $(git --version)"
echo "# load average at start: $(cut -d' ' -f1-3 /proc/loadavg); medians of $RUNS runs"

# ledger <dir> <facts>: a packed ledger of that many facts, the last
# min(TAIL, facts) appended one commit each.
ledger() {
	local d=$1 n=$2 tail=$TAIL t
	[ "$tail" -gt "$n" ] && tail=$n
	git init -q "$d"
	t=$(now_ms)
	local how="in one commit (rallybench bulk)" flag=
	if [ "$COMMITS" = all ]; then
		how="one commit each (rallybench bulk -commits)" flag=-commits
	fi
	if [ $((n - tail)) -gt 0 ]; then
		# The bulk ends before the appended facts begin: the simulated
		# room writes about a fact a minute with quiet stretches (10k facts
		# over 8 days), and its appender's clock is each commit's time, so
		# bulk facts dated after it would be held back as future-dated.
		rallybench bulk $flag -facts $((n - tail)) -end-in -$((tail * 2 + 1440))m | git -C "$d" fast-import --quiet
	fi
	(cd "$d" && "$rally" init >/dev/null)
	echo "- $n facts: $((n - tail)) $how, then $(rallybench build -dir "$d" -facts "$tail" -max-batch 1 -loose)"
	git -C "$d" gc --quiet
	echo "  built and packed in $(secs_since "$t"): $(git -C "$d" count-objects -vH | awk '/^in-pack:/{p=$2} /^size-pack:/{s=$2" "$3} END {print p " objects, pack " s}')"
}

echo
echo "## Ledgers"
if [ -n "${LEDGER:-}" ]; then
	cp -a "$LEDGER/big" "$work/big"
	cp -a "$LEDGER/small" "$work/small"
	echo "- reused from $LEDGER"
else
	ledger "$work/big" "$N"
	ledger "$work/small" 1000
fi
if [ "${KEEP:-}" = 1 ]; then
	echo "  (KEEP=1: LEDGER=$work reuses them)"
fi

# measure <label> <dir> <setup> <command...>: RUNS runs; prints median ms and max RSS MiB.
results=$work/results
: >"$results"
measure() {
	local label=$1 dir=$2 setup=$3
	shift 3
	local i out
	for ((i = 0; i < RUNS; i++)); do
		(cd "$dir" && eval "$setup")
		out=$(cd "$dir" && rallybench rusage "$@")
		echo "$label $out" >>"$results"
	done
}
# median <label> <field: 2 ns, 3 KiB>
median() {
	awk -v l="$1" -v f="$2" '$1 == l { print $f }' "$results" | sort -n | awk '{ a[NR] = $1 } END { if (NR) print a[int((NR + 1) / 2)]; else print "" }'
}
ms() { awk -v v="$(median "$1" 2)" 'BEGIN { if (v == "") print "-"; else printf "%.0f", v / 1e6 }'; }
mib() { awk -v v="$(median "$1" 3)" 'BEGIN { if (v == "") print "-"; else printf "%.0f", v / 1024 }'; }

big=$work/big
small=$work/small
# A first room builds the caches (warm cases).
(cd "$big" && "$rally" room --json >/dev/null)
(cd "$small" && "$rally" room --json >/dev/null)
id=$(cd "$big" && "$rally" log --json -n 1 | sed -n 's/.*"id": *"\(f_[0-9a-f]*\)".*/\1/p' | head -1)

# sync_step <clone>: SYNC new facts appended at the origin (a copy of the
# big ledger), then one sync in the clone, timed with its RSS. The clone's
# tracking ref is at the big ledger's head, as a clone's is after a sync.
sync_step() {
	rm -rf "$work/origin2"
	cp -a "$big" "$work/origin2"
	(cd "$1" && git remote set-url origin "file://$work/origin2")
	rallybench build -dir "$work/origin2" -facts "$SYNC" -seed 99 -loose >/dev/null
	echo "sync $(cd "$1" && rallybench rusage "$rally" sync)" >>"$results"
}
if [ "$SYNC_ONLY" = 1 ]; then
	echo
	echo "## Measuring the sync only ($RUNS runs)"
	for ((i = 0; i < RUNS; i++)); do
		rm -rf "$work/clone"
		cp -a "$big" "$work/clone"
		git -C "$work/clone" remote add origin "file://$big"
		git -C "$work/clone" config --add remote.origin.fetch "+refs/rally/*:refs/rally-remotes/origin/*"
		git -C "$work/clone" config rally.remote origin
		git -C "$work/clone" update-ref refs/rally-remotes/origin/ledger "$(git -C "$big" rev-parse refs/rally/ledger)"
		sync_step "$work/clone"
	done
	echo
	echo "## Issue 31 (N = $N facts; the sync only, median of $RUNS; ms and MiB of max RSS)"
	awk '$1 == "sync" { printf "  run: %.2f s, %.0f MiB, CPU %.2f s\n", $2 / 1e9, $3 / 1024, $4 / 1e9 }' "$results"
	row() { printf "%-52s %12s  %-14s %s\n" "$1" "$2" "$3" "$4"; }
	verdict() { awk -v v="$1" -v bar="$2" 'BEGIN { if (v == "-") print "-"; else if (v + 0 <= bar + 0) print "PASS"; else print "FAIL" }'; }
	sync_s=$(awk -v v="$(ms sync)" 'BEGIN { printf "%.2f", v / 1000 }')
	row "sync of $SYNC new facts, s" "$sync_s" "≤ 2" "$(verdict "$sync_s" 2)"
	row "  its max RSS MiB" "$(mib sync)" "" ""
	echo
	echo "load average at end: $(cut -d' ' -f1-3 /proc/loadavg)"
	exit 0
fi

echo
echo "## Measuring"
measure revlist "$big" : git rev-list --count refs/rally/ledger
measure cold "$big" "rm -rf .git/rally/cache" "$rally" room --json
# A signed checkpoint of the head (ckptref.go), trusted by its public key
# (rally.checkpointSigner; no allowed-signers file, so no signature
# verdicts are computed), then the cold room again: the cache deleted,
# the projection read from the checkpoint and the facts since (none).
ssh-keygen -q -t ed25519 -N '' -C checkpoint -f "$work/ckptkey"
(cd "$big" && "$rally" room --json >/dev/null)
git -C "$big" config user.signingKey "$work/ckptkey"
echo "- $(cd "$big" && rallybench rusage "$rally" checkpoint | awk '{ printf "checkpoint written in %.2f s, %.0f MiB max RSS", $1 / 1e9, $2 / 1024 }')"
git -C "$big" config --unset user.signingKey
git -C "$big" config rally.checkpointSigner "$(cat "$work/ckptkey.pub")"
measure coldckpt "$big" "rm -rf .git/rally/cache" "$rally" room --json
if [ -e "$big/.git/rally/cache/state.bin" ]; then echo "- warning: the cold room from the checkpoint saved state.bin: it did not start from the checkpoint"; fi
git -C "$big" config --unset rally.checkpointSigner
(cd "$big" && "$rally" room --json >/dev/null)
# A claim of a new file each time, in turn at N and at 1k.
for ((i = 0; i < RUNS; i++)); do
	echo "claim $(cd "$big" && rallybench rusage "$rally" claim "src/scale/$i.go" --tool bench:scale)" >>"$results"
	echo "claim1k $(cd "$small" && rallybench rusage "$rally" claim "src/scale/$i.go" --tool bench:scale)" >>"$results"
done
measure log "$big" : "$rally" log --json -n 10
# The first id lookup of a mirror generation writes its ids table
# (idstable.go): once, then the warm lookups.
RUNS_SAVE=$RUNS
RUNS=1
measure showfirst "$big" "rm -f .git/rally/cache/facts-*.ids" "$rally" show "$id"
RUNS=$RUNS_SAVE
measure show "$big" : "$rally" show "$id"
if [ "$DOCTOR" = 1 ]; then
	RUNS_SAVE=$RUNS
	RUNS=1
	measure doctor "$big" : "$rally" doctor
	if [ "$SIGNED" = 1 ]; then
		# Signing configured as a signing clone has it; the verdicts of a
		# million commits' facts are recorded by the first doctor.
		ssh-keygen -q -t ed25519 -N '' -C bench -f "$work/signkey"
		echo "bench:* $(cat "$work/signkey.pub")" >"$work/allowed"
		git -C "$big" config gpg.ssh.allowedSignersFile "$work/allowed"
		git -C "$big" config rally.sign true
		git -C "$big" config rally.requireSigned true
		git -C "$big" config user.signingKey "$work/signkey"
		rm -rf "$big/.git/rally/verdicts"
		measure doctorsig1 "$big" : "$rally" doctor
		measure doctorsig "$big" : "$rally" doctor
		git -C "$big" config --unset rally.requireSigned
		git -C "$big" config --unset rally.sign
		git -C "$big" config --unset user.signingKey
		git -C "$big" config --unset gpg.ssh.allowedSignersFile
	fi
	RUNS=$RUNS_SAVE
fi

# Every command an agent or a person runs to read, and the hooks, once
# each at N and at 1k (max RSS is steady from run to run): the same
# simulated room on top, so the open state is alike and the history is
# not. A hook's or a command's exit status is not what is measured here.
cmds=$work/cmds
: >"$cmds"
if [ "$COMMANDS" = 1 ]; then
	pre='{"session_id":"s1","hook_event_name":"PreToolUse","tool_name":"Bash","tool_input":{"command":"ls"}}'
	edit='{"session_id":"s1","hook_event_name":"PreToolUse","tool_name":"Edit","tool_input":{"file_path":"src/scale/hook.go","old_string":"a","new_string":"b"}}'
	prompt='{"session_id":"s1","hook_event_name":"UserPromptSubmit","prompt":"go on"}'
	for d in big small; do
		dir=$work/$d
		since=$(cd "$dir" && "$rally" log --json -n 5 --query 0.id)
		fid=$(cd "$dir" && "$rally" log --json --kind claim -n 1 --query 0.id)
		while IFS='|' read -r label cmd; do
			r=$(cd "$dir" && rallybench rusage sh -c "$cmd"' >/dev/null 2>&1; exit 0' sh "$rally" "$since" "$fid" "$pre" "$edit" "$prompt")
			echo "$label $d $r" >>"$cmds"
		done <<'CMDS'
room|"$1" room
room --json|"$1" room --json
check before-write|"$1" check before-write src/scale/x.go --tool bench:probe
inbox|"$1" inbox --tool bench:probe
next|"$1" next --tool bench:probe
log --json -n 10|"$1" log --json -n 10
log --json --kind handoff|"$1" log --json --kind handoff
log --json (whole)|"$1" log --json
log (whole)|"$1" --no-pager log
show <id>|"$1" show "$3"
sessions|"$1" sessions
worktree list|"$1" worktree list
watch --once --since <5th last>|"$1" watch --once --since "$2" --timeout 5s
doctor|"$1" doctor
hook pre-tool-use (Bash)|printf '%s\n' "$4" | RALLY_TOOL=claude_code:01 "$1" hook claude pre-tool-use
hook user-prompt-submit|printf '%s\n' "$6" | RALLY_TOOL=claude_code:01 "$1" hook claude user-prompt-submit
hook pre-tool-use (Edit: a claim)|printf '%s\n' "$5" | RALLY_TOOL=claude_code:01 "$1" hook claude pre-tool-use
CMDS
	done
fi

# A fresh clone: the plain fetch of the ledger ref, against init --remote,
# the fetch it configures and the first room.
clone() {
	rm -rf "$1"
	git init -q "$1"
	git -C "$1" remote add origin "file://$big"
}
for ((i = 0; i < RUNS; i++)); do
	clone "$work/fetch"
	echo "fetch $(cd "$work/fetch" && rallybench rusage git fetch -q origin refs/rally/ledger:refs/rally-remotes/origin/ledger)" >>"$results"
	clone "$work/clone"
	# init --remote fetches the ledger itself and builds the room.
	t0=$(date +%s%N)
	r1=$(cd "$work/clone" && rallybench rusage "$rally" init --remote origin)
	(cd "$work/clone" && git fetch -q origin)
	r2=$(cd "$work/clone" && rallybench rusage "$rally" room --json)
	t1=$(date +%s%N)
	echo "cloneroom $((t1 - t0)) $(printf '%s\n%s\n' "${r1#* }" "${r2#* }" | sort -n | tail -1)" >>"$results"
	# The same with the origin's checkpoint trusted (its public key in
	# rally.checkpointSigner): the first read starts from it.
	clone "$work/clonec"
	git -C "$work/clonec" config rally.checkpointSigner "$(cat "$work/ckptkey.pub")"
	t0=$(date +%s%N)
	r1=$(cd "$work/clonec" && rallybench rusage "$rally" init --remote origin)
	(cd "$work/clonec" && git fetch -q origin)
	r2=$(cd "$work/clonec" && rallybench rusage "$rally" room --json)
	t1=$(date +%s%N)
	echo "clonecroom $((t1 - t0)) $(printf '%s\n%s\n' "${r1#* }" "${r2#* }" | sort -n | tail -1)" >>"$results"
done
# RUNS syncs (the median, as every other row), each into the clone as
# init --remote left it.
cp -a "$work/clone" "$work/clone.base"
for ((i = 0; i < RUNS; i++)); do
	rm -rf "$work/clone"
	cp -a "$work/clone.base" "$work/clone"
	sync_step "$work/clone"
done

echo
echo "## Issue 31 (N = $N facts; medians of $RUNS; ms and MiB of max RSS)"
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { if (a == "-" || b == "-" || b == 0) print "-"; else printf "%.2f", a / b }'; }
verdict() { awk -v v="$1" -v op="$2" -v bar="$3" 'BEGIN { if (v == "-") print "-"; else if ((op == "le" && v + 0 <= bar + 0) || (op == "ge" && v + 0 >= bar + 0)) print "PASS"; else print "FAIL" }'; }
row() { printf "%-52s %12s  %-14s %s\n" "$1" "$2" "$3" "$4"; }
cold_s=$(awk -v v="$(ms cold)" 'BEGIN { printf "%.2f", v / 1000 }')
row "figure" "value" "bar" "verdict"
if [ "$N" -ge 1000000 ]; then cbar=3; mbar=150; else cbar=1; mbar=100; fi
row "cold room --json, s" "$cold_s" "≤ $cbar" "$(verdict "$cold_s" le $cbar)"
row "cold room --json, max RSS MiB" "$(mib cold)" "≤ $mbar" "$(verdict "$(mib cold)" le $mbar)"
r=$(ratio "$(ms cold)" "$(ms revlist)")
row "cold room / git rev-list --count ($(ms revlist) ms)" "$r" "(info)" ""
ck_s=$(awk -v v="$(ms coldckpt)" 'BEGIN { printf "%.3f", v / 1000 }')
row "cold room --json from a trusted checkpoint, s" "$ck_s" "" ""
row "  its max RSS MiB" "$(mib coldckpt)" "≤ $mbar" "$(verdict "$(mib coldckpt)" le $mbar)"
r=$(ratio "$(ms coldckpt)" "$(ms revlist)")
row "  cold room from a checkpoint / git rev-list --count" "$r" "≤ 4" "$(verdict "$r" le 4)"
r=$(ratio "$(ms cloneroom)" "$(ms fetch)")
row "init --remote + fetch + room / git fetch ($(ms fetch) ms)" "$r" "≤ 2" "$(verdict "$r" le 2)"
row "  init --remote and the first room, max RSS MiB" "$(mib cloneroom)" "" ""
r=$(ratio "$(ms clonecroom)" "$(ms fetch)")
row "  the same, the origin's checkpoint trusted / git fetch" "$r" "≤ 2" "$(verdict "$r" le 2)"
row "  its max RSS MiB" "$(mib clonecroom)" "" ""
sync_s=$(awk -v v="$(ms sync)" 'BEGIN { printf "%.2f", v / 1000 }')
row "sync of $SYNC new facts, s" "$sync_s" "≤ 2" "$(verdict "$sync_s" le 2)"
row "  its max RSS MiB" "$(mib sync)" "" ""
r=$(ratio "$(ms claim)" "$(ms claim1k)")
row "warm claim / warm claim at 1k ($(ms claim) / $(ms claim1k) ms)" "$r" "≤ 1.2" "$(verdict "$r" le 1.2)"
row "  warm claim max RSS MiB (1k: $(mib claim1k))" "$(mib claim)" "" ""
row "log --json -n 10, ms" "$(ms log)" "≤ 30" "$(verdict "$(ms log)" le 30)"
row "log --json -n 10, max RSS MiB" "$(mib log)" "≤ 32" "$(verdict "$(mib log)" le 32)"
row "show <id>, ms" "$(ms show)" "≤ 30" "$(verdict "$(ms show)" le 30)"
row "show <id>, max RSS MiB" "$(mib show)" "≤ 32" "$(verdict "$(mib show)" le 32)"
row "  the first lookup (writes the ids table), ms / MiB" "$(ms showfirst) / $(mib showfirst)" "" ""
if [ "$DOCTOR" = 1 ]; then
	doc_s=$(awk -v v="$(ms doctor)" 'BEGIN { printf "%.1f", v / 1000 }')
	row "doctor, s" "$doc_s" "≤ 30" "$(verdict "$doc_s" le 30)"
	row "doctor, max RSS MiB" "$(mib doctor)" "≤ 200" "$(verdict "$(mib doctor)" le 200)"
fi
if [ "$SIGNED" = 1 ]; then
	doc_s=$(awk -v v="$(ms doctorsig1)" 'BEGIN { printf "%.1f", v / 1000 }')
	row "doctor, signing configured, first verification, s" "$doc_s" "≤ 30" "$(verdict "$doc_s" le 30)"
	row "  its max RSS MiB" "$(mib doctorsig1)" "≤ 200" "$(verdict "$(mib doctorsig1)" le 200)"
	doc_s=$(awk -v v="$(ms doctorsig)" 'BEGIN { printf "%.1f", v / 1000 }')
	row "doctor, signing configured, verdicts recorded, s" "$doc_s" "≤ 30" "$(verdict "$doc_s" le 30)"
	row "  its max RSS MiB" "$(mib doctorsig)" "≤ 200" "$(verdict "$(mib doctorsig)" le 200)"
fi
if [ -s "$cmds" ]; then
	echo
	echo "## Max RSS of each command at $N facts and at 1k (the same room on top; once each)"
	printf "%-36s %10s %10s %8s  %-7s %s\n" "command" "MiB at N" "MiB at 1k" "ratio" "bar" "verdict"
	awk '{ l = $1; for (i = 2; i <= NF - 4; i++) l = l " " $i; d = $(NF - 3); rss[l, d] = $(NF - 1); if (!(l in seen)) { seen[l] = 1; order[++n] = l } }
		END { for (i = 1; i <= n; i++) { l = order[i]; a = rss[l, "big"] / 1024; b = rss[l, "small"] / 1024; r = b > 0 ? a / b : 0
			printf "%-36s %10.1f %10.1f %8.2f  %-7s %s\n", l, a, b, r, "≤ 1.5", (r <= 1.5 ? "PASS" : "FAIL") } }' "$cmds"
	echo "(doctor holds nothing per fact; git maps the pack's index whole and random lookups touch it all, 30 MB at a million objects: past 4 MiB of index each of doctor's cat-files looks up one range of ids, or 64 objects)"
fi
echo
echo "load average at end: $(cut -d' ' -f1-3 /proc/loadavg)"
