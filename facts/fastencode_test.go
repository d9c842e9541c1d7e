package facts

import (
	"bytes"
	"encoding/json"
	"reflect"
	"testing"
)

func jsonEncode(t testing.TB, f *Fact) []byte {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(f); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// everyField sets every wire field of a fact to s (strings, each element
// of a slice) or n (integers), so a field added to Fact is covered too.
func everyField(s string, n int64) *Fact {
	f := &Fact{}
	v := reflect.ValueOf(f).Elem()
	for _, ff := range FastFields().fields {
		fv := v.Field(ff.index)
		switch ff.kind {
		case reflect.String:
			fv.SetString(s)
		case reflect.Int, reflect.Int64:
			fv.SetInt(n)
		case reflect.Slice:
			fv.Set(reflect.ValueOf([]string{s, "", s + "x"}))
		}
	}
	return f
}

func TestFastEncodeAgreesWithEncodingJSON(t *testing.T) {
	if !FastFields().ok {
		t.Fatal("Fact has a field the fast encoder does not know")
	}
	strs := []string{"", "plain", `"q" \ /`, "<b>&amp;</b>", "\b\f\n\r\t\x00\x01\x1f\x7f", "é 😀 \u2028\u2029 \u00a0",
		"bad \xff\xfe utf8 \xe2\x82", "\xed\xa0\x80 surrogate"}
	cases := []*Fact{{}, {V: 1, Kind: KindNote}, {V: 1, Kind: KindClaim, Scopes: []string{}}}
	for i, s := range strs {
		cases = append(cases, everyField(s, int64(i)-3), everyField(s, 1<<53-1))
	}
	for i, f := range cases {
		if got, want := f.Encode(), jsonEncode(t, f); !bytes.Equal(got, want) {
			t.Errorf("case %d:\n got %s\nwant %s", i, got, want)
		}
	}
}

func FuzzFastEncode(f *testing.F) {
	f.Add("note", "file:a", int64(3))
	f.Add("\xff<\u2028\"\\\n", "", int64(-1))
	f.Fuzz(func(t *testing.T, s, scope string, n int64) {
		fa := everyField(s, n)
		fa.Scopes = []string{scope}
		if got, want := fa.Encode(), jsonEncode(t, fa); !bytes.Equal(got, want) {
			t.Fatalf("got %s\nwant %s", got, want)
		}
	})
}
