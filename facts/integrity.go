package facts

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"strings"
	"time"
	"unicode"
)

// MaxClock bounds a fact's clock: a positive integer below 2^53, so every
// JSON reader holds it exactly and a hostile clock cannot overflow the
// next append's.
const MaxClock = 1<<53 - 1

// FutureSkew is how far after the reader's clock a fact may be dated and
// still count as activity; a fact dated later is held back until it is no
// longer in the future (see State.Future).
const FutureSkew = 5 * time.Minute

// Corrupt explains why a stored fact cannot be believed.
type Corrupt struct {
	Code, Message string
}

// checkStored validates a fact read from the ledger (from a remote or a
// hand edit): its id is the hash of its content, its blob name is its id,
// its clock is in range, and the fields that identify things carry no
// control or invisible characters. name is the blob's file name ("" when
// not known).
func checkStored(f *Fact, line []byte, name string) *Corrupt {
	id, err := storedID(f, line)
	if err != nil || id != f.ID {
		return &Corrupt{"bad-id", fmt.Sprintf("fact %s: its content hashes to %s", Sanitize(f.ID, 40), id)}
	}
	if name != "" && name != f.ID+".json" {
		return &Corrupt{"bad-id", fmt.Sprintf("fact %s is stored as %s", f.ID, Sanitize(name, 60))}
	}
	if f.Clock <= 0 || f.Clock > MaxClock {
		return &Corrupt{"bad-clock", fmt.Sprintf("fact %s has clock %d, not a positive integer below 2^53", f.ID, f.Clock)}
	}
	for _, s := range identFields(f) {
		if !Printable(s) {
			return &Corrupt{"bad-text", fmt.Sprintf("fact %s carries control or invisible characters in %q", f.ID, Sanitize(s, 60))}
		}
	}
	return nil
}

func identFields(f *Fact) []string {
	out := []string{f.Kind, f.Tool, f.Session, f.At, f.Ref, f.Target, f.Access, f.AckBy, f.Severity, f.Status,
		f.Revision, f.Name, f.Path, f.Branch, f.Base}
	out = append(out, f.Scopes...)
	return append(out, f.Files...)
}

// Printable reports whether s has no control, format (bidi, zero-width)
// or invalid characters: what an identifier may hold.
func Printable(s string) bool {
	for _, r := range s {
		if isHidden(r) {
			return false
		}
	}
	return true
}

// isHidden reports a character that must never reach a terminal or an
// agent raw: C0 and C1 controls, DEL, Unicode format characters (bidi
// overrides and isolates, zero-width characters, the BOM), line and
// paragraph separators, and decoding errors.
func isHidden(r rune) bool {
	return r < ' ' || r == 0x7f || (r >= 0x80 && r < 0xa0) || r == unicode.ReplacementChar ||
		unicode.Is(unicode.Cf, r) || r == '\u2028' || r == '\u2029'
}

// storedID computes the id of a stored line. A line that is exactly this
// version's encoding of its fact (the common case) is hashed from the
// struct, in sorted key order, without decoding into a map; any other
// line (unknown keys, other spacing) goes the general way.
func storedID(f *Fact, line []byte) (string, error) {
	line = bytes.TrimRight(line, "\n")
	if enc := f.Encode(); bytes.Equal(bytes.TrimRight(enc, "\n"), line) {
		var buf bytes.Buffer
		e := json.NewEncoder(&buf)
		e.SetEscapeHTML(false)
		if err := e.Encode(canonical(f)); err == nil {
			sum := sha256.Sum256(buf.Bytes())
			return "f_" + hex.EncodeToString(sum[:8]), nil
		}
	}
	return ComputeID(line)
}

// canonFact has the fields of Fact in sorted key order and without the id:
// its encoding is the canonical content ComputeID hashes.
type canonFact struct {
	Access   string   `json:"access,omitempty"`
	AckBy    string   `json:"ack_by,omitempty"`
	At       string   `json:"at,omitempty"`
	Base     string   `json:"base,omitempty"`
	Body     string   `json:"body,omitempty"`
	Branch   string   `json:"branch,omitempty"`
	Clock    int64    `json:"clock"`
	Evidence []string `json:"evidence,omitempty"`
	Files    []string `json:"files,omitempty"`
	Kind     string   `json:"kind"`
	LeaseS   int64    `json:"lease_s,omitempty"`
	Name     string   `json:"name,omitempty"`
	Path     string   `json:"path,omitempty"`
	Reason   string   `json:"reason,omitempty"`
	Ref      string   `json:"ref,omitempty"`
	Revision string   `json:"revision,omitempty"`
	Scopes   []string `json:"scopes,omitempty"`
	Session  string   `json:"session,omitempty"`
	Severity string   `json:"severity,omitempty"`
	Status   string   `json:"status,omitempty"`
	Subject  string   `json:"subject,omitempty"`
	Target   string   `json:"target,omitempty"`
	Tool     string   `json:"tool,omitempty"`
	URI      string   `json:"uri,omitempty"`
	V        int      `json:"v"`
}

func canonical(f *Fact) canonFact {
	return canonFact{AckBy: f.AckBy, Access: f.Access, At: f.At, Base: f.Base, Body: f.Body, Branch: f.Branch,
		Clock: f.Clock, Evidence: f.Evidence, Files: f.Files, Kind: f.Kind, LeaseS: f.LeaseS, Name: f.Name,
		Path: f.Path, Reason: f.Reason, Ref: f.Ref, Revision: f.Revision, Scopes: f.Scopes, Session: f.Session,
		Severity: f.Severity, Status: f.Status, Subject: f.Subject, Target: f.Target, Tool: f.Tool, URI: f.URI, V: f.V}
}

// baseName is the last element of a slash path.
func baseName(p string) string {
	if i := strings.LastIndexByte(p, '/'); i >= 0 {
		return p[i+1:]
	}
	return p
}
