package cli

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"reflect"
	"strings"
	"time"

	"github.com/tidwall/gjson"

	"github.com/git-rally/git-rally/cmd/git-rally/cli/cmdutil"
	"github.com/git-rally/git-rally/facts"
	"github.com/git-rally/git-rally/ledger"
)

const chunkSize = 32 << 10

// writeRoomJSON writes r exactly as cmdutil.IndentedJSON(r) does, byte for
// byte, without encoding/json's reflection over every claim and without
// indenting the document a second time: a room of 1,600 open claims is
// 600 KB of claims of one fixed shape, appended here straight into the
// output, while the small rest (peers, handoffs, totals...) goes through
// indentedJSON field by field. TestRoomJSONMatchesIndentedJSON compares
// the two on rooms with every field of claimJSON set.
func writeRoomJSON(w io.Writer, r *roomJSON) error {
	// The output goes out in chunks: a buffer of the whole document
	// would be 600 KB of fresh pages for a room of 1,600 claims.
	cw := chunkWriter{w: w, b: make([]byte, 0, chunkSize+4096)}
	cw.b = append(cw.b, "{\n"...)
	v := reflect.ValueOf(r).Elem()
	t := v.Type()
	first := true
	for i := 0; i < t.NumField(); i++ {
		if !t.Field(i).IsExported() {
			continue
		}
		name, opts, _ := strings.Cut(t.Field(i).Tag.Get("json"), ",")
		fv := v.Field(i)
		if opts == "omitempty" && emptyJSONValue(fv) {
			continue
		}
		if !first {
			cw.b = append(cw.b, ",\n"...)
		}
		first = false
		cw.b = append(cw.b, `  "`...)
		cw.b = append(cw.b, name...)
		cw.b = append(cw.b, `": `...)
		if t.Field(i).Name == "Claims" {
			if r.stream != nil {
				cw.stream(r.stream)
			} else {
				cw.claims(r.Claims)
			}
			continue
		}
		sub, err := cmdutil.IndentedJSON(fv.Interface())
		if err != nil {
			return err
		}
		// Nested one level down: every line after the first gets the
		// indent of the level (JSON strings hold no raw newline).
		sb := bytes.TrimSuffix(sub.Bytes(), []byte("\n"))
		for {
			j := bytes.IndexByte(sb, '\n')
			if j < 0 {
				cw.b = append(cw.b, sb...)
				break
			}
			cw.b = append(cw.b, sb[:j+1]...)
			cw.b = append(cw.b, "  "...)
			sb = sb[j+1:]
		}
		cw.flushFull()
	}
	cw.b = append(cw.b, "\n}\n"...)
	cw.flush()
	return cw.err
}

// chunkWriter collects output and writes it in chunks of about chunkSize;
// the first write error sticks.
type chunkWriter struct {
	w   io.Writer
	b   []byte
	err error
}

func (cw *chunkWriter) flushFull() {
	if len(cw.b) >= chunkSize {
		cw.flush()
	}
}

func (cw *chunkWriter) flush() {
	if cw.err == nil && len(cw.b) > 0 {
		_, cw.err = cw.w.Write(cw.b)
	}
	cw.b = cw.b[:0]
}

// claimStream is a room's claims as their views: the JSON of each is made
// as it is written, not all of them first.
type claimStream struct {
	views    []facts.ClaimView
	verifier *ledger.Verifier
}

// stream appends the claims array of s, as claims does for the claims
// toClaimJSON and addRoomVerdicts make of them.
func (cw *chunkWriter) stream(s *claimStream) {
	if len(s.views) == 0 {
		cw.b = append(cw.b, "[]"...)
		return
	}
	cw.b = append(cw.b, '[')
	var lastAt time.Time
	lastLease := ""
	var parts claimParts
	for i, v := range s.views {
		if i > 0 {
			cw.b = append(cw.b, ',')
		}
		// An owner's claims mostly share a lease time: format it once.
		if lastLease == "" || !v.LeaseExpires.Equal(lastAt) {
			lastAt, lastLease = v.LeaseExpires, facts.FormatTime(v.LeaseExpires)
		}
		c := toClaimJSONLease(v, lastLease)
		c.Verified = verdictOf(s.verifier, c.ID, c.Tool)
		cw.b = append(cw.b, "\n    "...)
		cw.b = parts.appendClaim(cw.b, &c)
		cw.flushFull()
	}
	cw.b = append(cw.b, "\n  ]"...)
}

// claims appends the claims array as the value of a member of the
// top-level object (indented one level).
func (cw *chunkWriter) claims(cs []claimJSON) {
	if cs == nil {
		cw.b = append(cw.b, "null"...)
		return
	}
	if len(cs) == 0 {
		cw.b = append(cw.b, "[]"...)
		return
	}
	cw.b = append(cw.b, '[')
	for i := range cs {
		if i > 0 {
			cw.b = append(cw.b, ',')
		}
		cw.b = append(cw.b, "\n    "...)
		cw.b = appendClaimJSON(cw.b, &cs[i])
		cw.flushFull()
	}
	cw.b = append(cw.b, "\n  ]"...)
}

// emptyJSONValue is encoding/json's test for omitempty.
func emptyJSONValue(v reflect.Value) bool {
	switch v.Kind() {
	case reflect.Array, reflect.Map, reflect.Slice, reflect.String:
		return v.Len() == 0
	case reflect.Bool:
		return !v.Bool()
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		return v.Int() == 0
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
		return v.Uint() == 0
	case reflect.Float32, reflect.Float64:
		return v.Float() == 0
	case reflect.Interface, reflect.Pointer:
		return v.IsNil()
	}
	return false
}

// appendClaimJSON appends one claim as an element of the claims array
// (indented two levels), its members in claimJSON's order.
func appendClaimJSON(b []byte, c *claimJSON) []byte {
	b = append(b, "{\n      \"id\": "...)
	b = appendJSONString(b, c.ID)
	b = appendClaimOwner(b, c)
	b = appendClaimBody(b, c)
	return appendClaimTail(b, c)
}

// appendClaimOwner appends the tool and session members.
func appendClaimOwner(b []byte, c *claimJSON) []byte {
	b = append(b, ",\n      \"tool\": "...)
	b = appendJSONString(b, c.Tool)
	if c.Session != "" {
		b = append(b, ",\n      \"session\": "...)
		b = appendJSONString(b, c.Session)
	}
	return b
}

// appendClaimBody appends the members from scopes to at.
func appendClaimBody(b []byte, c *claimJSON) []byte {
	b = append(b, ",\n      \"scopes\": "...)
	switch {
	case c.Scopes == nil:
		b = append(b, "null"...)
	case len(c.Scopes) == 0:
		b = append(b, "[]"...)
	default:
		b = append(b, '[')
		for i, s := range c.Scopes {
			if i > 0 {
				b = append(b, ',')
			}
			b = append(b, "\n        "...)
			b = appendJSONString(b, s)
		}
		b = append(b, "\n      ]"...)
	}
	b = append(b, ",\n      \"access\": "...)
	b = appendJSONString(b, c.Access)
	if c.Subject != "" {
		b = append(b, ",\n      \"subject\": "...)
		b = appendJSONString(b, c.Subject)
	}
	b = append(b, ",\n      \"at\": "...)
	return appendJSONString(b, c.At)
}

// appendClaimTail appends the members from lease_expires_at on and the
// end of the claim.
func appendClaimTail(b []byte, c *claimJSON) []byte {
	b = append(b, ",\n      \"lease_expires_at\": "...)
	b = appendJSONString(b, c.LeaseExpiresAt)
	b = append(b, ",\n      \"lease_state\": "...)
	b = appendJSONString(b, c.LeaseState)
	b = append(b, ",\n      \"owner_state\": "...)
	b = appendJSONString(b, c.OwnerState)
	if c.Contested {
		b = append(b, ",\n      \"contested\": true"...)
	} else {
		b = append(b, ",\n      \"contested\": false"...)
	}
	if c.HeldOver != "" {
		b = append(b, ",\n      \"contested_by\": "...)
		b = appendJSONString(b, c.HeldOver)
	}
	if c.Verified != "" {
		b = append(b, ",\n      \"verified\": "...)
		b = appendJSONString(b, c.Verified)
	}
	return append(b, "\n    }"...)
}

// claimParts keeps the owner and tail members of the last claim written:
// an owner's claims in a row mostly share them (same tool and session,
// lease time, states, verdict), and then they are copied, not made again.
type claimParts struct {
	owner, tail                                       []byte
	tool, session                                     string
	lease, leaseState, ownerState, heldOver, verified string
	contested, have                                   bool
}

func (p *claimParts) appendClaim(b []byte, c *claimJSON) []byte {
	b = append(b, "{\n      \"id\": "...)
	b = appendJSONString(b, c.ID)
	if !p.have || c.Tool != p.tool || c.Session != p.session {
		p.owner = appendClaimOwner(p.owner[:0], c)
		p.tool, p.session = c.Tool, c.Session
	}
	if !p.have || c.LeaseExpiresAt != p.lease || c.LeaseState != p.leaseState || c.OwnerState != p.ownerState ||
		c.Contested != p.contested || c.HeldOver != p.heldOver || c.Verified != p.verified {
		p.tail = appendClaimTail(p.tail[:0], c)
		p.lease, p.leaseState, p.ownerState = c.LeaseExpiresAt, c.LeaseState, c.OwnerState
		p.contested, p.heldOver, p.verified = c.Contested, c.HeldOver, c.Verified
	}
	p.have = true
	b = append(b, p.owner...)
	b = appendClaimBody(b, c)
	return append(b, p.tail...)
}

// appendJSONString appends s quoted as encoding/json writes it with HTML
// escaping off. Printable ASCII without a quote or backslash, what ids,
// times, tools and most scopes are, is written as it is; anything else
// goes through encoding/json itself.
func appendJSONString(b []byte, s string) []byte {
	i := 0
	for ; i+8 <= len(s); i += 8 { // eight bytes at a time
		w := s[i : i+8]
		x := uint64(w[0]) | uint64(w[1])<<8 | uint64(w[2])<<16 | uint64(w[3])<<24 |
			uint64(w[4])<<32 | uint64(w[5])<<40 | uint64(w[6])<<48 | uint64(w[7])<<56
		if plainWord(x) {
			continue
		}
		return appendJSONStringSlow(b, s)
	}
	for ; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c >= 0x7f || c == '"' || c == '\\' {
			return appendJSONStringSlow(b, s)
		}
	}
	b = append(b, '"')
	b = append(b, s...)
	return append(b, '"')
}

// plainWord reports whether none of x's eight bytes is below 0x20, at or
// above 0x7f, a quote or a backslash.
func plainWord(x uint64) bool {
	const ones, highs = 0x0101010101010101, 0x8080808080808080
	// (v - ones) &^ v & highs is not 0 when a byte of v is 0.
	q, bs, del := x^(ones*'"'), x^(ones*'\\'), x^(ones*0x7f)
	bad := x | (x-ones*0x20)&^x | (q-ones)&^q | (bs-ones)&^bs | (del-ones)&^del
	return bad&highs == 0
}

func appendJSONStringSlow(b []byte, s string) []byte {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	enc.Encode(s) // a string always encodes
	return append(b, bytes.TrimSuffix(buf.Bytes(), []byte("\n"))...)
}

// encodeIndented is cmdutil.IndentedJSON(v), a room by writeRoomJSON.
func encodeIndented(v any) (*bytes.Buffer, error) {
	if r, ok := v.(*roomJSON); ok {
		var buf bytes.Buffer
		if err := writeRoomJSON(&buf, r); err != nil {
			return nil, err
		}
		return &buf, nil
	}
	return cmdutil.IndentedJSON(v)
}

// writeIndented writes encodeIndented(v) to w.
func writeIndented(w io.Writer, v any) error {
	if r, ok := v.(*roomJSON); ok {
		return writeRoomJSON(w, r)
	}
	buf, err := cmdutil.IndentedJSON(v)
	if err != nil {
		return err
	}
	_, err = w.Write(buf.Bytes())
	return err
}

// printJSON writes v as indented JSON, or the part --query selects
// (every command's Factory.PrintJSON).
func printJSON(f *cmdutil.Factory, j *cmdutil.JSONFlags, v any) error {
	if j.Query == "" {
		return writeIndented(f.Out, v)
	}
	buf, err := encodeIndented(v)
	if err != nil {
		return err
	}
	if !gjson.ValidBytes(buf.Bytes()) {
		return fmt.Errorf("internal: invalid JSON output")
	}
	res := gjson.GetBytes(buf.Bytes(), j.Query)
	if !res.Exists() {
		// Never a silent no-op: a path that names nothing exits 1 with
		// a note (as jq -e does), so a script tells "absent" from "empty".
		fmt.Fprintf(f.Err, "git-rally: note: --query %s matched nothing in the output\n", j.Query)
		return &exitError{Code: ExitError}
	}
	if res.Type == gjson.String {
		fmt.Fprintln(f.Out, res.String())
		return nil
	}
	// An object or array picked out of the indented document keeps its
	// old depth; indent it as --json would print it on its own. What
	// gjson builds (a multipath {a,b}, a #(...)# list) is one compact
	// line, and scripts match it as such.
	var ind bytes.Buffer
	if strings.Contains(res.Raw, "\n") && json.Indent(&ind, []byte(res.Raw), "", "  ") == nil {
		fmt.Fprintln(f.Out, ind.String())
		return nil
	}
	fmt.Fprintln(f.Out, res.Raw)
	return nil
}
