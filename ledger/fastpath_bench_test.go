package ledger

import (
	"bytes"
	"encoding/json"
	"fmt"
	"testing"
	"unsafe"

	"github.com/git-rally/git-rally/facts"
)

// The hand-written fast paths against the plain way, paired (bench/README.md
// records the figures and what each buys on a command):
//
//	go test ./ledger -run '^$' -bench 'FastPath|Prefault' -count 6

// benchClaimLine is a sealed claim as the ledger stores it (no newline).
func benchClaimLine() []byte {
	f := &facts.Fact{V: 1, Kind: facts.KindClaim, Tool: "claude_code:impl-1", Session: "impl-1", At: "2026-12-01T10:00:00Z",
		Clock: 1234, Scopes: []string{"file:src/payments/charge.go", "file:src/payments/refund.go"}, Access: "write",
		LeaseS: 1800, Subject: "charge retries"}
	f.Seal()
	return bytes.TrimRight(f.Raw, "\n")
}

// Decoding a stored line: fastDecode (Parse's path) or encoding/json.
func BenchmarkFastPathDecode(b *testing.B) {
	line := benchClaimLine()
	b.Run("fast", func(b *testing.B) {
		for i := 0; i < b.N; i++ {
			if _, _, ok := facts.FastDecode(line); !ok {
				b.Fatal("not decoded")
			}
		}
	})
	b.Run("encoding-json", func(b *testing.B) {
		for i := 0; i < b.N; i++ {
			var f facts.Fact
			if err := json.Unmarshal(line, &f); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// A rebuild's decoding of a blob's line: the strings aliasing the line
// (unsafe.String) or copied from it.
func BenchmarkFastPathAlias(b *testing.B) {
	line := benchClaimLine()
	var f facts.Fact
	var ms facts.FastMembers
	b.Run("unsafe-string", func(b *testing.B) {
		for i := 0; i < b.N; i++ {
			f, ms = facts.Fact{}, facts.FastMembers{}
			if !facts.FastDecodeInto(&f, line, unsafe.String(unsafe.SliceData(line), len(line)), &ms) {
				b.Fatal("not decoded")
			}
		}
	})
	b.Run("string-copy", func(b *testing.B) {
		for i := 0; i < b.N; i++ {
			f, ms = facts.Fact{}, facts.FastMembers{}
			if !facts.FastDecodeInto(&f, line, string(line), &ms) {
				b.Fatal("not decoded")
			}
		}
	})
}

// Encoding a fact (every Seal): appendFact or encoding/json's Encoder.
func BenchmarkFastPathEncode(b *testing.B) {
	var f facts.Fact
	if _, _, ok := facts.FastDecode(benchClaimLine()); !ok {
		b.Fatal("not decoded")
	}
	g, _, _ := facts.FastDecode(benchClaimLine())
	f = *g
	tab := facts.FastFields()
	b.Run("fast", func(b *testing.B) {
		for i := 0; i < b.N; i++ {
			facts.AppendFact(make([]byte, 0, 256), &f, tab)
		}
	})
	b.Run("encoding-json", func(b *testing.B) {
		for i := 0; i < b.N; i++ {
			var buf bytes.Buffer
			enc := json.NewEncoder(&buf)
			enc.SetEscapeHTML(false)
			if err := enc.Encode(&f); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// A room's decoding of 1,619 open claims from the mapped claims file
// through a fresh Ledger, with and without prefault (MADV_POPULATE_WRITE
// on the fresh slabs). In one process the heap's pages are reused, so
// this shows less than a new process would: bench/ab.sh measures room.
func BenchmarkPrefault(b *testing.B) {
	now := t0
	_, cs := network(b, 1, &now)
	c := cs[0]
	for done := 0; done < 1619; done += 200 {
		if _, err := c.ledger(b).Append(manyClaims(fmt.Sprint("c", done), min(200, 1619-done))); err != nil {
			b.Fatal(err)
		}
	}
	c.state(b)
	for _, off := range []bool{false, true} {
		b.Run(map[bool]string{false: "madvise", true: "plain"}[off], func(b *testing.B) {
			noPrefault = off
			defer func() { noPrefault = false }()
			for i := 0; i < b.N; i++ {
				l := c.ledger(b)
				st, err := l.Read()
				if err != nil {
					b.Fatal(err)
				}
				st.Room(now)
				l.Close()
			}
		})
	}
}
