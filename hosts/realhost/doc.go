// Package realhost is the real-host test suite: it runs Claude Code, Codex
// and Gemini CLI themselves, installed from npm at the versions pinned in
// npm/package.json and npm/package-lock.json (cached under
// $XDG_CACHE_HOME/git-rally/realhost, else ~/.cache, never in the
// repository), each against a scripted model server written in Go on
// 127.0.0.1 (the Anthropic Messages API through ANTHROPIC_BASE_URL, the
// OpenAI Responses API through a custom model provider in a private
// CODEX_HOME, the Gemini API through GOOGLE_GEMINI_BASE_URL), inside a
// network namespace with only loopback up (`unshare -n`, `ip link set lo
// up`), so nothing leaves the machine.
//
// Through each host it checks that the installed hooks load, that presence
// and a claim land, that strict mode blocks an edit of a claimed path (file
// unchanged) through the direct edit tool and, for Codex, through a
// shell-tool apply_patch heredoc, that a non-strict warning and an inbox
// item reach the model (read from the requests the server received; the
// item escaped), that the agent's own git rally runs as its hooks'
// identity, and that a second session after the first ended is not blocked
// by its claims. For Codex it also checks the upgrade from an older rally's
// `git rally hook` lines: install changes them in place (Codex's approval
// keys stay), Codex holds them for approval again, then trusts them.
//
// `go test ./hosts/realhost` runs it (about a minute once the hosts are
// cached); `go test -short` skips it; when npm cannot reach its registry it
// prints SKIP with the reason, and FAIL under CI=true. RALLY_REALHOST_DUMP=<dir> writes every
// request the model server received, to look at a host's wire by hand;
// RALLY_REALHOST_GIT_RALLY=<binary> runs the suite against another build
// of git-rally (an older one, to see which checks it fails).
// RALLY_REALHOST_BYHAND=<dir> (TestByHand, with the test binary run as the
// inner process inside a network namespace of one's own) sets up a
// repository, a returning user's HOME and the hosts on a PATH, and serves
// the scripted model, to try the hosts by hand: see byhand_test.go.
// To move a host to a new version: change npm/package.json, run
// `npm install --package-lock-only --ignore-scripts` in npm/, run the suite.
package realhost
