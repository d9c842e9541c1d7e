package facts

import (
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"reflect"
	"sort"
	"strconv"
	"strings"
	"sync"
	"unicode/utf8"
)

// A stored line is almost always exactly this version's encoding of its
// fact (Encode: the fields in struct order, empty ones left out, strings
// escaped the way encoding/json escapes them). Such a line is decoded here
// without encoding/json, and its id is checked by hashing its members
// re-ordered by key, which is what ComputeID's re-encoding of the sorted
// object writes for it, byte for byte. Anything else — an unknown key, a
// key out of order, spacing, an escape other than \" \\ \n \r \t, a
// number not in its shortest form, invalid UTF-8 — is not canonical, and
// goes the general way (json.Unmarshal, storedID): the fast path only
// ever answers what the general one would.

// fastField is a wire field of Fact.
type fastField struct {
	name  string
	index int // in Fact
	kind  reflect.Kind
	bits  int  // of an integer
	omit  bool // omitempty
}

// maxFastFields bounds Fact's wire fields for the fixed-size member table.
const maxFastFields = 48

type fastTable struct {
	fields []fastField
	canon  []int // positions in fields, sorted by name, without the id
	ok     bool  // every field has a type the fast decoder knows
}

var FastFields = sync.OnceValue(func() *fastTable {
	t := reflect.TypeOf(Fact{})
	tab := &fastTable{ok: true}
	for i := 0; i < t.NumField(); i++ {
		sf := t.Field(i)
		tag := sf.Tag.Get("json")
		name, opts, _ := strings.Cut(tag, ",")
		if name == "-" || !sf.IsExported() {
			continue
		}
		if name == "" {
			name = sf.Name
		}
		ff := fastField{name: name, index: i, kind: sf.Type.Kind(), omit: opts == "omitempty"}
		switch {
		case ff.kind == reflect.String:
		case ff.kind == reflect.Int || ff.kind == reflect.Int64:
			ff.bits = sf.Type.Bits()
		case ff.kind == reflect.Slice && sf.Type.Elem().Kind() == reflect.String:
		default:
			tab.ok = false
		}
		tab.fields = append(tab.fields, ff)
	}
	if len(tab.fields) > maxFastFields {
		tab.ok = false
	}
	for j, ff := range tab.fields {
		if ff.name != "id" {
			tab.canon = append(tab.canon, j)
		}
	}
	sort.Slice(tab.canon, func(a, b int) bool { return tab.fields[tab.canon[a]].name < tab.fields[tab.canon[b]].name })
	return tab
})

// FastMembers are where each field's member ("key":value) is in a line:
// [start, end), end 0 when absent.
type FastMembers [maxFastFields][2]int32

// FastDecode decodes a canonical line (without its newline). ok is false
// when the line is not canonical; nothing is known about it then.
func FastDecode(b []byte) (f *Fact, ms FastMembers, ok bool) {
	if !FastFields().ok || len(b) < 2 || b[0] != '{' || b[len(b)-1] != '}' || len(b) > 1<<30 {
		return nil, ms, false
	}
	f = &Fact{}
	// One string holds the line; the fields written as they are are
	// slices of it (one allocation a fact, not one a field).
	if ok = FastDecodeInto(f, b, string(b), &ms); !ok {
		return nil, ms, false
	}
	return f, ms, true
}

// FastDecodeInto is fastDecode into f, which the caller zeroed, with str
// holding b's bytes: the strings of f are slices of str, so with str
// aliasing b (unsafe.String), f holds no copy of the line.
func FastDecodeInto(f *Fact, b []byte, str string, ms *FastMembers) bool {
	tab := FastFields()
	if !tab.ok || len(b) < 2 || b[0] != '{' || b[len(b)-1] != '}' || len(b) > 1<<30 {
		return false
	}
	v := reflect.ValueOf(f).Elem()
	pos, next := 1, 0
	for {
		start := pos
		if pos >= len(b) || b[pos] != '"' {
			return false
		}
		end := pos + 1
		for end < len(b) && b[end] != '"' && b[end] != '\\' {
			end++
		}
		if end+1 >= len(b) || b[end] != '"' || b[end+1] != ':' {
			return false
		}
		key := b[pos+1 : end]
		fi := -1
		for j := next; j < len(tab.fields); j++ {
			if tab.fields[j].name == string(key) {
				fi = j
				break
			}
			if !tab.fields[j].omit {
				return false // the encoder writes it always
			}
		}
		if fi < 0 {
			return false
		}
		ff := tab.fields[fi]
		pos = end + 2
		switch ff.kind {
		case reflect.String:
			s, n, ok := fastString(b, str, pos)
			if !ok || (ff.omit && s == "") {
				return false
			}
			v.Field(ff.index).SetString(s)
			pos = n
		case reflect.Int, reflect.Int64:
			n := pos
			if n < len(b) && b[n] == '-' {
				n++
			}
			for n < len(b) && b[n] >= '0' && b[n] <= '9' {
				n++
			}
			x, err := strconv.ParseInt(string(b[pos:n]), 10, ff.bits)
			var buf [24]byte
			if err != nil || string(strconv.AppendInt(buf[:0], x, 10)) != string(b[pos:n]) || (ff.omit && x == 0) {
				return false
			}
			v.Field(ff.index).SetInt(x)
			pos = n
		default: // []string, never empty: an empty one is left out
			if pos >= len(b) || b[pos] != '[' {
				return false
			}
			pos++
			var ss []string
			for {
				s, n, ok := fastString(b, str, pos)
				if !ok || n >= len(b) {
					return false
				}
				ss = append(ss, s)
				pos = n + 1
				if b[n] == ']' {
					break
				}
				if b[n] != ',' {
					return false
				}
			}
			v.Field(ff.index).Set(reflect.ValueOf(ss))
		}
		ms[fi] = [2]int32{int32(start), int32(pos)}
		next = fi + 1
		if pos >= len(b) {
			return false
		}
		if b[pos] == '}' {
			if pos != len(b)-1 {
				return false
			}
			break
		}
		if b[pos] != ',' {
			return false
		}
		pos++
	}
	for j := next; j < len(tab.fields); j++ {
		if !tab.fields[j].omit {
			return false
		}
	}
	return true
}

// fastString reads the string at b[pos] as encoding/json (with HTML
// escaping off) writes it, and returns it and the position after it. str
// is b as a string: an unescaped value is a slice of it.
func fastString(b []byte, str string, pos int) (string, int, bool) {
	if pos >= len(b) || b[pos] != '"' {
		return "", 0, false
	}
	escaped := false
	i := pos + 1
	for i < len(b) {
		// Bytes the loop below would only step over (printable ASCII
		// but the quote and the backslash) are skipped 8 at a time.
		for i+8 <= len(b) && !special8(binary.LittleEndian.Uint64(b[i:])) {
			i += 8
		}
		if i >= len(b) {
			break
		}
		c := b[i]
		switch {
		case c == '"':
			if !escaped {
				return str[pos+1 : i], i + 1, true
			}
			return unescapeFast(b[pos+1 : i]), i + 1, true
		case c == '\\':
			if i+1 >= len(b) {
				return "", 0, false
			}
			switch b[i+1] {
			case '"', '\\', 'n', 'r', 't':
			default:
				return "", 0, false
			}
			escaped = true
			i += 2
		case c < ' ':
			return "", 0, false
		case c < utf8.RuneSelf:
			i++
		default:
			r, size := utf8.DecodeRune(b[i:])
			if (r == utf8.RuneError && size == 1) || r == '\u2028' || r == '\u2029' {
				return "", 0, false
			}
			i += size
		}
	}
	return "", 0, false
}

// special8 reports whether one of the 8 bytes of x may be below ' ', a
// quote, a backslash or not ASCII: it is never false when one is (true
// can be a false alarm; the caller then looks at the bytes one by one).
func special8(x uint64) bool {
	const lo, hi = 0x0101010101010101, 0x8080808080808080
	zero := func(v uint64) uint64 { return (v - lo) & ^v & hi } // a zero byte
	less := (x - lo*' ') & ^x & hi                              // a byte below ' '
	return (x&hi | less | zero(x^(lo*'"')) | zero(x^(lo*'\\'))) != 0
}

func unescapeFast(s []byte) string {
	out := make([]byte, 0, len(s))
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c != '\\' {
			out = append(out, c)
			continue
		}
		i++
		switch s[i] {
		case 'n':
			out = append(out, '\n')
		case 'r':
			out = append(out, '\r')
		case 't':
			out = append(out, '\t')
		default:
			out = append(out, s[i])
		}
	}
	return string(out)
}

// FastID is the id of a canonical line: the hash of its members but the
// id in key order, as ComputeID re-encodes them.
func FastID(b []byte, ms *FastMembers) string {
	var id [18]byte
	FastIDInto(&id, nil, b, ms)
	return string(id[:])
}

// FastIDInto writes fastID's id into id, hashing in buf (grown as needed
// and returned, for the next call).
func FastIDInto(id *[18]byte, buf, b []byte, ms *FastMembers) []byte {
	tab := FastFields()
	buf = append(buf[:0], '{')
	for _, j := range tab.canon {
		m := ms[j]
		if m[1] == 0 {
			continue
		}
		if len(buf) > 1 {
			buf = append(buf, ',')
		}
		buf = append(buf, b[m[0]:m[1]]...)
	}
	buf = append(buf, '}', '\n')
	sum := sha256.Sum256(buf)
	id[0], id[1] = 'f', '_'
	hex.Encode(id[2:], sum[:8])
	return buf
}
