// Package facts owns the meaning of a ledger: the fact model (encoding,
// ids, Lamport clocks, validation), scopes and their overlap, the rules
// an append runs under the lock (AppendFunc), and the projections
// computed from facts: State and, from it, the room, the write check,
// inbox, next and the reaper. It is pure: no files, no git, no
// goroutines, clocks only as arguments; package ledger stores and reads
// the facts. It never prints, never exits and imports neither refs nor
// ledger.
package facts
