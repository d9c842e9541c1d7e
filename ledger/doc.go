// Package ledger is the storage engine of the facts on refs/rally/ledger:
// append inside git's ref lock, incremental read through a disposable
// cache (state.bin, the claims and handoffs files, the mirror and its
// checkpoints), rebuild, sync and merge with remotes, signature verdicts,
// watch, tail, heal and doctor. What a fact means and which facts a rule
// allows are package facts'; this package never prints or exits.
package ledger
