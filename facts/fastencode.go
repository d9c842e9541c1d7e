package facts

import (
	"reflect"
	"strconv"
	"unicode/utf8"
)

// AppendFact appends f's line (without newline) as encoding/json writes
// it with HTML escaping off: the fields in struct order, empty omitempty
// ones left out. Sealing a fact is on every append's path, and
// encoding/json's first use of a type (0.05-0.1 ms of reflection per
// process) is most of it; this walks the wire fields fastFields found.
// TestFastEncodeAgreesWithEncodingJSON holds it to encoding/json's bytes.
func AppendFact(b []byte, f *Fact, tab *fastTable) []byte {
	v := reflect.ValueOf(f).Elem()
	b = append(b, '{')
	first := true
	for _, ff := range tab.fields {
		fv := v.Field(ff.index)
		switch ff.kind {
		case reflect.String:
			if ff.omit && fv.Len() == 0 {
				continue
			}
		case reflect.Int, reflect.Int64:
			if ff.omit && fv.Int() == 0 {
				continue
			}
		case reflect.Slice:
			if ff.omit && fv.Len() == 0 {
				continue
			}
		}
		if !first {
			b = append(b, ',')
		}
		first = false
		b = append(b, '"')
		b = append(b, ff.name...)
		b = append(b, '"', ':')
		switch ff.kind {
		case reflect.String:
			b = appendJSONString(b, fv.String())
		case reflect.Int, reflect.Int64:
			b = strconv.AppendInt(b, fv.Int(), 10)
		case reflect.Slice:
			if fv.IsNil() {
				b = append(b, "null"...)
				continue
			}
			b = append(b, '[')
			for i := 0; i < fv.Len(); i++ {
				if i > 0 {
					b = append(b, ',')
				}
				b = appendJSONString(b, fv.Index(i).String())
			}
			b = append(b, ']')
		}
	}
	return append(b, '}')
}

// appendJSONString appends s quoted as encoding/json quotes it without
// HTML escaping: \" \\ \b \f \n \r \t, other control bytes as \u00XX,
// invalid UTF-8 as \ufffd, U+2028 and U+2029 escaped.
func appendJSONString(b []byte, s string) []byte {
	const hex = "0123456789abcdef"
	b = append(b, '"')
	start := 0
	for i := 0; i < len(s); {
		if c := s[i]; c < utf8.RuneSelf {
			if c >= 0x20 && c != '"' && c != '\\' {
				i++
				continue
			}
			b = append(b, s[start:i]...)
			switch c {
			case '"', '\\':
				b = append(b, '\\', c)
			case '\b':
				b = append(b, '\\', 'b')
			case '\f':
				b = append(b, '\\', 'f')
			case '\n':
				b = append(b, '\\', 'n')
			case '\r':
				b = append(b, '\\', 'r')
			case '\t':
				b = append(b, '\\', 't')
			default:
				b = append(b, '\\', 'u', '0', '0', hex[c>>4], hex[c&0xf])
			}
			i++
			start = i
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 {
			b = append(b, s[start:i]...)
			b = append(b, `\ufffd`...)
			i += size
			start = i
			continue
		}
		if r == '\u2028' || r == '\u2029' {
			b = append(b, s[start:i]...)
			b = append(b, '\\', 'u', '2', '0', '2', hex[r&0xf])
			i += size
			start = i
			continue
		}
		i += size
	}
	b = append(b, s[start:]...)
	return append(b, '"')
}
