// Package plan owns workstreams (SPEC §15): the plan file (one job split
// into tasks, each owning its scopes), its lint, the task board computed
// from the room, and the append rules of start, take, report and close,
// which run inside the ledger's append so a rule checked cannot be undone
// by a concurrent writer. It talks to the ledger only through facts; it
// never prints or exits.
package plan
