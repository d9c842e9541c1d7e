#!/usr/bin/env bash
# bench/sessions.sh: `sessions --json` with 20 live managed sessions against
# `room --json` (issue 15: at most 3x), and `watch` idle for 60 s (under 1%
# of a core, from /usr/bin/time -v).
#
# Starts 20 sessions (each runs `sleep 600`) on a private tmux server
# (TMUX_TMPDIR in a temporary directory), times RUNS rounds of both
# commands as whole processes, alternating, and prints the medians and their
# ratio; then it kills exactly those sessions. With IDLE=1 it also runs
# `watch --timeout 60s` under /usr/bin/time -v.
#
# Usage: bench/sessions.sh        RUNS=41 IDLE=1 bench/sessions.sh
set -euo pipefail
RUNS=${RUNS:-21}
here=$(cd "$(dirname "$0")/.." && pwd)
tmp=$(mktemp -d /tmp/rsb.XXXX)
mkdir -p "$tmp/bin"
(cd "$here" && CGO_ENABLED=0 go build -o "$tmp/bin/git-rally" ./cmd/git-rally)
export TMUX_TMPDIR=$tmp/t HOME=$tmp/home GIT_CONFIG_NOSYSTEM=1 RALLY_AUTOPACK=0
unset TMUX
mkdir -p "$TMUX_TMPDIR" "$HOME"
trap 'for s in $(tmux list-sessions -F "#{session_name}" 2>/dev/null); do tmux kill-session -t "=$s"; done; rm -rf "$tmp"' EXIT
export PATH=$tmp/bin:$PATH
git config --global user.name bench; git config --global user.email b@e; git config --global init.defaultBranch main
git init -q "$tmp/repo" && cd "$tmp/repo" && git commit -q --allow-empty -m base
git rally init >/dev/null
for i in $(seq 20); do git rally run claude --command-json '["sleep","600"]' >/dev/null; done
echo "sessions live: $(git rally sessions --json --query 'sessions.#(state=="live")#.session' | tr -cd , | wc -c | awk '{print $1+1}')"
ms() { local t0 t1; t0=$(date +%s%N); "$@" >/dev/null; t1=$(date +%s%N); echo $(( (t1 - t0) / 1000 )); }
s=(); r=()
for i in $(seq "$RUNS"); do
  s+=("$(ms git rally sessions --json)")
  r+=("$(ms git rally room --json)")
done
med() { printf '%s\n' "$@" | sort -n | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }
ms_s=$(med "${s[@]}"); ms_r=$(med "${r[@]}")
echo "sessions --json: median ${ms_s} us; room --json: median ${ms_r} us; ratio $(awk -v a="$ms_s" -v b="$ms_r" 'BEGIN {printf "%.2f", a/b}') (bar <= 3)"
if [ "${IDLE:-0}" = 1 ]; then
  /usr/bin/time -v git rally watch --timeout 60s 2>&1 >/dev/null | grep -E 'User time|System time|Percent of CPU|Elapsed'
fi
