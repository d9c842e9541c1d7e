package cli

import (
	"bytes"
	"encoding/json"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/git-rally/git-rally/cmd/git-rally/cli/cmdutil"
)

// indentedJSON writes exactly what encoding/json's Encoder writes with
// SetIndent("", "  ") and SetEscapeHTML(false), for any value.
func TestIndentedJSONMatchesEncoder(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 11))
	strs := []string{"", "a", `q"uote`, `back\slash`, "<b>&amp;</b>", "line\nbreak\ttab", "\u2028\u2029", "é中文🙂", "\x01ctl", "  spaced  ", "[]{}:,"}
	var gen func(depth int) any
	gen = func(depth int) any {
		switch k := rng.IntN(9); {
		case depth > 4 || k == 0:
			return strs[rng.IntN(len(strs))]
		case k == 1:
			return rng.Float64()*1e6 - 5e5
		case k == 2:
			return rng.IntN(3) == 0
		case k == 3:
			return nil
		case k <= 5:
			n := rng.IntN(4)
			a := make([]any, n)
			for i := range a {
				a[i] = gen(depth + 1)
			}
			return a
		default:
			n := rng.IntN(4)
			m := map[string]any{}
			for i := 0; i < n; i++ {
				m[strs[rng.IntN(len(strs))]+strings.Repeat("k", i)] = gen(depth + 1)
			}
			return m
		}
	}
	type claim struct {
		ID     string   `json:"id"`
		Scopes []string `json:"scopes"`
		Empty  []string `json:"empty"`
		Nested struct {
			X int `json:"x,omitempty"`
		} `json:"nested"`
	}
	values := []any{claim{ID: "c1", Scopes: []string{"src/**", "<x>"}, Empty: []string{}}, map[string]any{}, []any{}, "s", 1.5, nil}
	for i := 0; i < 500; i++ {
		values = append(values, gen(0))
	}
	for _, v := range values {
		var want bytes.Buffer
		enc := json.NewEncoder(&want)
		enc.SetEscapeHTML(false)
		enc.SetIndent("", "  ")
		if err := enc.Encode(v); err != nil {
			t.Fatal(err)
		}
		got, err := cmdutil.IndentedJSON(v)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got.Bytes(), want.Bytes()) {
			t.Fatalf("for %#v\n got %q\nwant %q", v, got.Bytes(), want.Bytes())
		}
	}
}
