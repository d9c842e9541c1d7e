// Package worktree finds the repository and its common dir from any
// worktree, creates and removes agents' linked worktrees on rally/<name>,
// and computes the read-only merge plan.
package worktree
