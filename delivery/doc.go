// Package delivery owns what rally hands a managed session from another
// agent (SPEC §13): the message, made inert by construction so that no
// shell, dialog or host can read it as a command or an answer, and the
// machine-local queue of messages that wait for the session to be idle at
// its own prompt. The session package decides when to paste or queue; the
// agent hooks hand queued messages over through the host's own channel
// (the turn's end, the next prompt's context).
package delivery
