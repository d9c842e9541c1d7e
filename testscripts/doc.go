// Package testscripts holds the end-to-end suites: one testscript file per
// behaviour under testdata/, run against the real git-rally binary as both
// `git-rally` and `git rally`.
package testscripts
