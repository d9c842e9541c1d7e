// Package facts owns the fact model (encoding, ids, Lamport clocks,
// validation), the ledger (append inside the ref lock, incremental read
// through a disposable cache) and the projections computed from it: the
// room, the write check, inbox, next and the reaper. It never prints, never
// exits and never imports go-git or cobra.
package facts
