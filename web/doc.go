// Package web serves the room as a live web page on loopback: the room,
// the history, the worktree plan and the plans' task boards, rendered with
// html/template from the very JSON the commands print (a Source the cli
// hands in), kept current by server-sent events fed by one ledger
// watcher. It is read-only and guarded: a random token in every request,
// Host and Origin must name the loopback address it listens on, GET and
// HEAD only, and every text that came from the ledger is escaped by
// html/template. Its assets are embedded; it needs nothing from the network.
package web
