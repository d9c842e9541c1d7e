package hooks

import (
	"encoding/json"
	"strings"
	"testing"
)

// A file written the way Claude Code and most tools write JSON (two-space
// indent, one value per line) comes back byte for byte.
func TestObjectRoundTrip(t *testing.T) {
	for _, in := range []string{
		"{\n  \"a\": 1,\n  \"z\": {\n    \"y\": [\n      true,\n      null\n    ],\n    \"b\": \"x<y>&\\u00e9\"\n  },\n  \"m\": []\n}\n",
		"{\n\t\"tab\": \"indent\"\n}",
		"{}\n",
	} {
		o, err := parseObject([]byte(in))
		if err != nil {
			t.Fatalf("parse %q: %v", in, err)
		}
		indent, nl := style([]byte(in))
		if got := string(o.format(indent, nl)); got != in {
			t.Errorf("round trip:\n got %q\nwant %q", got, in)
		}
	}
}

func TestObjectKeepsOrderAndEdits(t *testing.T) {
	o, err := parseObject([]byte(`{"b":1,"a":2,"c":3}`))
	if err != nil {
		t.Fatal(err)
	}
	o.set("a", json.RawMessage(`"two"`))
	o.set("d", json.RawMessage(`4`))
	o.del("b")
	if got := string(o.compact()); got != `{"a":"two","c":3,"d":4}` {
		t.Errorf("compact = %s", got)
	}
}

func TestParseObjectRejects(t *testing.T) {
	for _, in := range []string{`[]`, `"s"`, `{"a":1} {"b":2}`, `{"a":`, `{"a" 1}`} {
		if _, err := parseObject([]byte(in)); err == nil {
			t.Errorf("parseObject(%q) accepted it", in)
		}
	}
	if o, err := parseObject([]byte("  \n")); err != nil || !o.empty() {
		t.Errorf("blank input: %v, %v", o, err)
	}
}

func TestStyle(t *testing.T) {
	for _, tc := range []struct {
		in     string
		indent string
		nl     bool
	}{
		{"", "  ", true},
		{`{"a":1}`, "  ", false},
		{"{\n    \"a\": 1\n}\n", "    ", true},
		{"{\n\t\"a\": 1\n}", "\t", false},
	} {
		indent, nl := style([]byte(tc.in))
		if indent != tc.indent || nl != tc.nl {
			t.Errorf("style(%q) = %q, %v; want %q, %v", tc.in, indent, nl, tc.indent, tc.nl)
		}
	}
}

func TestDropRally(t *testing.T) {
	gs := []json.RawMessage{
		json.RawMessage(`{"matcher":"Bash","hooks":[{"type":"command","command":"guard"}]}`),
		json.RawMessage(`{"hooks":[{"type":"command","command":"git rally hook claude pre-tool-use"},{"type":"command","command":"mine"}]}`),
		json.RawMessage(`{"hooks":[{"type":"command","command":"  git-rally hook claude session-start"}]}`),
		json.RawMessage(`"not an object"`),
	}
	out, removed := dropRally(gs)
	if !removed {
		t.Fatal("nothing removed")
	}
	got := string(arrayOf(out))
	want := `[{"matcher":"Bash","hooks":[{"type":"command","command":"guard"}]},{"hooks":[{"type":"command","command":"mine"}]},"not an object"]`
	if got != want {
		t.Errorf("dropRally:\n got %s\nwant %s", got, want)
	}
	if _, removed := dropRally(out); removed {
		t.Error("removed twice")
	}
	if !strings.Contains(canonical(json.RawMessage(`{"b":1, "a":2}`)), `{"a":2,"b":1}`) {
		t.Error("canonical does not sort keys")
	}
}
