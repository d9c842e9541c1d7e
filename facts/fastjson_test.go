package facts

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"math/rand"
	"reflect"
	"testing"
)

// slowParse is what the fast path must agree with: json.Unmarshal, and
// the line's id by the general way.
func slowParse(line []byte) (*Fact, string, bool) {
	var f Fact
	if json.Unmarshal(line, &f) != nil {
		return nil, "", false
	}
	id, err := ComputeID(line)
	if err != nil {
		return nil, "", false
	}
	return &f, id, true
}

// checkFast fails when the fast decoder accepts a line and decodes it or
// hashes it otherwise than encoding/json and ComputeID, or accepts a line
// that is not exactly Encode of what it decoded.
func checkFast(t *testing.T, line []byte) bool {
	t.Helper()
	f, ms, ok := FastDecode(line)
	if !ok {
		return false
	}
	want, id, wok := slowParse(line)
	if !wok {
		t.Fatalf("fast path accepts %q, encoding/json does not", line)
	}
	if !reflect.DeepEqual(f, want) {
		t.Fatalf("fast path decodes %q as\n%+v, encoding/json as\n%+v", line, f, want)
	}
	if got := FastID(line, &ms); got != id {
		t.Fatalf("fast path hashes %q to %s, ComputeID to %s", line, got, id)
	}
	if enc := f.Encode(); !bytes.Equal(enc[:len(enc)-1], line) {
		t.Fatalf("fast path accepts %q, which is not the encoding %q", line, enc)
	}
	return true
}

func TestFastDecodeAgreesWithEncodingJSON(t *testing.T) {
	rng := rand.New(rand.NewSource(7))
	words := []string{"", "a", "src/<x>.go", "ünï", "\"q\"", "tab\there", "&amp;", "line\nbreak", "cr\rx", "\u202e",
		"back\\slash", "\x7f", "\ufffd", "日本", "\x01", "\u2028", "bell\b", "ff\f", string([]byte{0xff, 'x'})}
	const safe = 14 // the words before \x01 are written as they are or with \" \\ \n \r \t
	accepted, plain := 0, 0
	for i := 0; i < 3000; i++ {
		n := len(words)
		if i%2 == 0 {
			n = safe
			plain++
		}
		pick := func() string { return words[rng.Intn(n)] }
		f := &Fact{V: rng.Intn(3), Kind: Kinds[rng.Intn(len(Kinds))], Tool: "t:" + pick(), Session: pick(), At: pick(),
			Clock: rng.Int63n(MaxClock) - 5, Ref: pick(), Target: pick(), Subject: pick(), Body: pick(),
			LeaseS: rng.Int63n(5) - 1, Reason: pick(), URI: pick(), Name: pick(), Base: pick(),
			Access: pick(), AckBy: pick(), Revision: pick(), Severity: pick(), Status: pick(),
			Path: pick(), Branch: pick(), Agent: pick(), Backend: pick(), Worktree: pick()}
		if rng.Intn(2) == 0 {
			f.Scopes = []string{pick(), pick()}
			f.Evidence = []string{pick()}
			f.Files = []string{pick()}
			f.Command = []string{pick(), pick(), pick()}
		}
		f.Seal()
		line := bytes.TrimSuffix(f.Raw, []byte("\n"))
		if checkFast(t, line) && n == safe {
			accepted++
		}
		// Edits: a byte changed, removed or doubled, spacing, a key
		// renamed or in another case, an unknown key, other number and
		// escape forms, empty arrays and nulls.
		for k := 0; k < 8; k++ {
			m := append([]byte(nil), line...)
			switch p := rng.Intn(len(m)); rng.Intn(12) {
			case 0:
				m[p] = byte(rng.Intn(256))
			case 1:
				m = append(m[:p], m[p+1:]...)
			case 2:
				m = append(m[:p], append([]byte{m[p]}, m[p:]...)...)
			case 3:
				m = bytes.Replace(m, []byte(`":`), []byte(`": `), 1)
			case 4:
				m = bytes.Replace(m, []byte(`"kind"`), []byte(`"Kind"`), 1)
			case 5:
				m = bytes.Replace(m, []byte(`{"v"`), []byte(`{"zz":1,"v"`), 1)
			case 6:
				m = bytes.Replace(m, []byte(`"clock":`), []byte(`"clock":0`), 1)
			case 7:
				m = bytes.Replace(m, []byte(`"clock":`), []byte(`"clock":-0,"x":`), 1)
			case 8:
				m = bytes.Replace(m, []byte(`\n`), []byte(`\u000a`), 1)
			case 9:
				m = bytes.Replace(m, []byte(`"scopes":[`), []byte(`"scopes":[],"y":[`), 1)
			case 10:
				m = bytes.Replace(m, []byte(`,"tool"`), []byte(`,"files":null,"tool"`), 1)
			default:
				m = bytes.Replace(m, []byte(`"v":`), []byte(`"v":1,"v":`), 1)
			}
			checkFast(t, m)
		}
	}
	if accepted != plain {
		t.Fatalf("the fast path took %d of %d facts of plain text", accepted, plain)
	}
}

func FuzzFastDecode(f *testing.F) {
	fa := &Fact{V: 1, Kind: KindClaim, Tool: "a", At: "2026-01-01T00:00:00.000Z", Clock: 3, Scopes: []string{"file:x"}, Body: "a\nb"}
	fa.Seal()
	f.Add(bytes.TrimSuffix(fa.Raw, []byte("\n")))
	f.Add([]byte(`{"v":1,"id":"f_0","kind":"note","clock":1}`))
	f.Fuzz(func(t *testing.T, line []byte) { checkFast(t, line) })
}

// special8 never misses a byte fastString must look at, wherever in the
// word it is and whatever plain bytes surround it.
func TestSpecial8(t *testing.T) {
	rng := rand.New(rand.NewSource(3))
	plain := func() byte {
		for {
			if c := byte(' ' + rng.Intn(0x7f-' ')); c != '"' && c != '\\' {
				return c
			}
		}
	}
	for v := 0; v < 256; v++ {
		special := v < ' ' || v == '"' || v == '\\' || v >= 0x80
		for p := 0; p < 8; p++ {
			for k := 0; k < 20; k++ {
				var w [8]byte
				for i := range w {
					w[i] = plain()
				}
				w[p] = byte(v)
				x := binary.LittleEndian.Uint64(w[:])
				if special && !special8(x) {
					t.Fatalf("byte %#x at %d of %q not seen", v, p, w)
				}
			}
		}
	}
}
