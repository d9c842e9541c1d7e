// Package session runs agents in managed sessions (SPEC §13): readable ids
// numbered per room, the launch plan, the launch itself (an agent
// worktree, the host's hooks in it, a detached terminal, one session
// fact), the state of each session as its terminal backend reports it,
// delivery of handoffs into a terminal, stop and adopt.
//
// The terminal multiplexer sits behind Backend; tmux.go is the only file
// that runs tmux, always with an argv, never through a shell. The package
// talks to the ledger through facts and to git through worktree.
package session
