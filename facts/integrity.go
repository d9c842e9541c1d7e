package facts

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"reflect"
	"sort"
	"strings"
	"sync"
	"time"
	"unicode"
)

// MaxClock bounds a fact's clock: a positive integer below 2^53, so every
// JSON reader holds it exactly and a hostile clock cannot overflow the
// next append's.
const MaxClock = 1<<53 - 1

// FutureSkew is how far after the reader's clock a fact may be dated and
// still count as activity; a fact dated later is held back until it is no
// longer in the future (see State.Held).
const FutureSkew = 5 * time.Minute

// Corrupt explains why a stored fact cannot be believed.
type Corrupt struct {
	Code, Message string
}

// CheckStored validates a fact read from the ledger (from a remote or a
// hand edit): its id is the hash of its content, its blob name is its id,
// its clock is in range, and the fields that identify things carry no
// control or invisible characters. name is the blob's file name ("" when
// not known).
func CheckStored(f *Fact, line []byte, name string) *Corrupt {
	id, err := storedID(f, line)
	return CheckStoredID(f, id, err, name)
}

// CheckStoredID is checkStored once the line's id is computed.
func CheckStoredID(f *Fact, id string, err error, name string) *Corrupt {
	if err != nil || id != f.ID {
		return &Corrupt{"bad-id", fmt.Sprintf("fact %s: its content hashes to %s", Sanitize(f.ID, 40), id)}
	}
	if name != "" && name != f.ID+".json" {
		return &Corrupt{"bad-id", fmt.Sprintf("fact %s is stored as %s", f.ID, Sanitize(name, 60))}
	}
	if f.Clock <= 0 || f.Clock > MaxClock {
		return &Corrupt{"bad-clock", fmt.Sprintf("fact %s has clock %d, not a positive integer below 2^53", f.ID, f.Clock)}
	}
	if s, ok := unprintableIdent(f); ok {
		return &Corrupt{"bad-text", fmt.Sprintf("fact %s carries control or invisible characters in %q", f.ID, Sanitize(s, 60))}
	}
	return checkShape(f)
}

// checkShape holds a stored fact to what an append may write (SPEC §2,
// §3): ids of the allowed characters, canonical scopes, texts within
// their limits. A fact over them came from elsewhere and is corrupt.
func checkShape(f *Fact) *Corrupt {
	for _, id := range [...]struct{ key, v string }{{"tool", f.Tool}, {"target", f.Target}, {"session", f.Session}} {
		if id.key == "target" && f.Kind == KindSession { // a session's target is its terminal (a tmux pane)
			continue
		}
		if (id.v != "" || id.key == "tool") && !ValidID(id.v) {
			return &Corrupt{"bad-tool", fmt.Sprintf("fact %s: %s %q is not 1-128 letters, digits and _ . - + : /", f.ID, id.key, Sanitize(id.v, 60))}
		}
	}
	for _, sc := range f.Scopes {
		if why := NonCanonical(sc); why != "" {
			return &Corrupt{"bad-scope", fmt.Sprintf("fact %s: scope %q is not canonical (%s): it claims nothing", f.ID, Sanitize(sc, 60), why)}
		}
	}
	if len(f.Subject) > MaxSubject || strings.ContainsAny(f.Subject, "\n\r") {
		return &Corrupt{"oversize", fmt.Sprintf("fact %s: its subject is %d bytes or more than one line (the limit is %d, one line)", f.ID, len(f.Subject), MaxSubject)}
	}
	if len(f.Body) > MaxBody {
		return &Corrupt{"oversize", fmt.Sprintf("fact %s: its body is %d bytes (the limit is %d)", f.ID, len(f.Body), MaxBody)}
	}
	if len(f.Reason) > MaxSubject*4 {
		return &Corrupt{"oversize", fmt.Sprintf("fact %s: its reason is over %d bytes", f.ID, MaxSubject*4)}
	}
	for _, ss := range [...][]string{f.Evidence, f.Files} {
		for _, s := range ss {
			if len(s) > MaxSubject*4 {
				return &Corrupt{"oversize", fmt.Sprintf("fact %s: a file or evidence line is %d bytes (the limit is %d)", f.ID, len(s), MaxSubject*4)}
			}
		}
	}
	return nil
}

// unprintableIdent returns the first of f's identifying fields that is
// not Printable.
func unprintableIdent(f *Fact) (string, bool) {
	for _, s := range [...]string{f.Kind, f.Tool, f.Session, f.At, f.Ref, f.Target, f.Access, f.AckBy, f.Severity, f.Status,
		f.Revision, f.Name, f.Path, f.Branch, f.Base} {
		if !Printable(s) {
			return s, true
		}
	}
	for _, ss := range [2][]string{f.Scopes, f.Files} {
		for _, s := range ss {
			if !Printable(s) {
				return s, true
			}
		}
	}
	return "", false
}

// Printable reports whether s has no control, format (bidi, zero-width)
// or invalid characters: what an identifier may hold.
func Printable(s string) bool {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < ' ' || c >= 0x7f {
			return printableRunes(s[i:])
		}
	}
	return true
}

func printableRunes(s string) bool {
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
	if r < 0x80 { // no ASCII character is of class Cf: the common case costs two compares
		return r < ' ' || r == 0x7f
	}
	return r < ' ' || r == 0x7f || (r >= 0x80 && r < 0xa0) || r == unicode.ReplacementChar ||
		unicode.Is(unicode.Cf, r) || r == '\u2028' || r == '\u2029'
}

// storedID computes the id of a stored line. A line that is exactly this
// version's encoding of its fact (the common case) is hashed from the
// struct's fields put in a map (encoding/json writes maps in sorted key
// order, as ComputeID does), without decoding the JSON text; any other
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

// canonType is Fact's struct with its wire fields but the id, in sorted
// key order (built from Fact's tags by reflection, so a key added to
// Fact is hashed without anyone remembering to): encoding/json writes it
// exactly as ComputeID writes the sorted map, at the speed of a struct.
// It is built on first use (a command that reads no tree never needs it);
// the second value maps its fields to Fact's.
var canonType = sync.OnceValues(func() (reflect.Type, []int) {
	t := reflect.TypeOf(Fact{})
	type field struct {
		sf   reflect.StructField
		from int
		name string
	}
	var fs []field
	for i := 0; i < t.NumField(); i++ {
		sf := t.Field(i)
		name, _, _ := strings.Cut(sf.Tag.Get("json"), ",")
		if name == "" || name == "-" || name == "id" || !sf.IsExported() {
			continue
		}
		fs = append(fs, field{reflect.StructField{Name: sf.Name, Type: sf.Type, Tag: sf.Tag}, i, name})
	}
	sort.Slice(fs, func(i, j int) bool { return fs[i].name < fs[j].name })
	sfs := make([]reflect.StructField, len(fs))
	from := make([]int, len(fs))
	for i, f := range fs {
		sfs[i], from[i] = f.sf, f.from
	}
	return reflect.StructOf(sfs), from
})

// canonical is the fact's content without the id, as ComputeID sees it.
func canonical(f *Fact) any {
	typ, from := canonType()
	src := reflect.ValueOf(f).Elem()
	dst := reflect.New(typ).Elem()
	for i, j := range from {
		dst.Field(i).Set(src.Field(j))
	}
	return dst.Addr().Interface()
}

// BaseName is the last element of a slash path.
func BaseName(p string) string {
	if i := strings.LastIndexByte(p, '/'); i >= 0 {
		return p[i+1:]
	}
	return p
}

// printableASCII reports whether s holds only bytes 0x20-0x7e, none of
// which Sanitize changes.
func printableASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < ' ' || c >= 0x7f {
			return false
		}
	}
	return true
}
