#!/usr/bin/env bash
# bench/hook_ab.sh: the agent hooks a host runs before and after every tool
# call, as whole processes, built at two revisions and run alternately on
# copies of one repository, so a slow minute falls on both.
#
#   bench/hook_ab.sh <rev-a> <rev-b> [runs]          (default 60 runs)
#
# A managed session's identity (RALLY_TOOL, RALLY_SESSION) and a ledger of
# a few hundred facts; the session already working. Per run it times, for
# a and b in alternating order: pre-tool-use of a Bash command that writes
# nothing (`ls`), pre-tool-use of an Edit of a file the session holds, and
# user-prompt-submit. Prints the median and p90 of each and the ratio of
# the medians (b/a).
set -euo pipefail
if [ $# -lt 2 ]; then
	echo "usage: bench/hook_ab.sh <rev-a> <rev-b> [runs]" >&2
	exit 2
fi
revs=("$1" "$2")
runs=${3:-60}
root=$(cd "$(dirname "$0")/.." && pwd)
work=$(mktemp -d "${TMPDIR:-/tmp}/rally-hookab.XXXXXX")
trap 'rm -rf "$work"; git -C "$root" worktree prune' EXIT
export RALLY_AUTOPACK=0 GIT_CONFIG_NOSYSTEM=1

for i in 0 1; do
	git -C "$root" worktree add -q --detach "$work/src$i" "${revs[$i]}"
	(cd "$work/src$i" && CGO_ENABLED=0 go build -o "$work/bin$i" ./cmd/git-rally)
done
export HOME="$work" # after the builds: go keeps its module cache under HOME
git init -q "$work/base"
(cd "$work/base" && git -c user.name=b -c user.email=b@b commit -q --allow-empty -m base && mkdir -p src &&
	for n in $(seq 100); do "$work/bin0" claim "src/f$n.go" --tool "bench:peer$((n % 7))" >/dev/null; done &&
	for n in $(seq 50); do "$work/bin0" handoff --tool bench:peer1 --target "bench:other$((n % 5))" --subject "h $n" >/dev/null; done)
for i in 0 1; do
	cp -a "$work/base" "$work/repo$i"
	(cd "$work/repo$i" && RALLY_TOOL=claude_code:01 "$work/bin$i" claim src/mine.go >/dev/null && "$work/bin$i" room >/dev/null)
done
bash_json='{"session_id":"s1","hook_event_name":"PreToolUse","tool_name":"Bash","tool_input":{"command":"ls"}}'
edit_json='{"session_id":"s1","hook_event_name":"PreToolUse","tool_name":"Edit","tool_input":{"file_path":"src/mine.go","old_string":"a","new_string":"b"}}'
prompt_json='{"session_id":"s1","hook_event_name":"UserPromptSubmit","prompt":"go on"}'
export RALLY_TOOL=claude_code:01 RALLY_SESSION= RALLY_MANAGED=1
# warm: each revision records its first activity, as a session's first hook does
for i in 0 1; do (cd "$work/repo$i" && echo "$bash_json" | "$work/bin$i" hook claude pre-tool-use >/dev/null); done

time1() { # bin event json -> microseconds
	local s e
	s=$(date +%s%N)
	echo "$3" | "$1" hook claude "$2" >/dev/null 2>&1
	e=$(date +%s%N)
	echo $(((e - s) / 1000))
}
for r in $(seq "$runs"); do
	order="0 1"
	[ $((r % 2)) = 0 ] && order="1 0"
	for i in $order; do
		cd "$work/repo$i"
		echo "bash $i $(time1 "$work/bin$i" pre-tool-use "$bash_json")"
		echo "edit $i $(time1 "$work/bin$i" pre-tool-use "$edit_json")"
		echo "prompt $i $(time1 "$work/bin$i" user-prompt-submit "$prompt_json")"
	done
done >"$work/times"

q() { # file quantile
	awk -v q="$2" '{ a[NR] = $1 } END { i = int(NR * q); if (i < 1) i = 1; printf "%.1f", a[i] / 1000 }' "$1"
}
for k in bash edit prompt; do
	for i in 0 1; do
		awk -v k="$k" -v i="$i" '$1 == k && $2 == i { print $3 }' "$work/times" | sort -n >"$work/$k$i"
	done
	m0=$(q "$work/${k}0" 0.5) m1=$(q "$work/${k}1" 0.5)
	printf "%-7s a=%s median %s ms p90 %s ms | b=%s median %s ms p90 %s ms | b/a %.2f\n" "$k" "${revs[0]}" "$m0" "$(q "$work/${k}0" 0.9)" \
		"${revs[1]}" "$m1" "$(q "$work/${k}1" 0.9)" "$(echo "$m1 $m0" | awk '{ print $1 / $2 }')"
done
for i in 0 1; do
	n=$(cd "$work/repo$i" && "$work/bin$i" log --kind status --query '#' 2>/dev/null || echo 0)
	echo "status facts written by ${revs[$i]}: $n"
done
