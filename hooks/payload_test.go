package hooks

import (
	"reflect"
	"strings"
	"testing"
)

func TestPatchPaths(t *testing.T) {
	for _, tc := range []struct {
		name, patch string
		want        []string
	}{
		{"empty", "", nil},
		{"update", "*** Begin Patch\n*** Update File: a/b.go\n@@\n-x\n+y\n*** End Patch\n", []string{"a/b.go"}},
		{"all ops", "*** Begin Patch\n*** Add File: n.md\n+hi\n*** Delete File: gone.go\n*** Update File: old.go\n*** Move to: new.go\n*** End Patch",
			[]string{"n.md", "gone.go", "old.go", "new.go"}},
		{"crlf and indent", "*** Begin Patch\r\n  *** Update File: w.go  \r\n*** End Patch\r\n", []string{"w.go"}},
		{"content lines are not headers", "*** Begin Patch\n*** Update File: a.go\n+*** Add File: not-a-header\n-*** Delete File: nor-this\n*** End Patch", []string{"a.go"}},
		{"empty path", "*** Add File: \n*** Add File:x", []string{"x"}},
		{"absolute", "*** Update File: /repo/abs.go", []string{"/repo/abs.go"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := PatchPaths(tc.patch); !reflect.DeepEqual(got, tc.want) {
				t.Errorf("PatchPaths = %q, want %q", got, tc.want)
			}
		})
	}
}

func FuzzPatchPaths(f *testing.F) {
	f.Add("*** Begin Patch\n*** Update File: a.go\n*** Move to: b.go\n*** End Patch\n")
	f.Add("*** Add File:\n***\n*** Delete File: x")
	f.Fuzz(func(t *testing.T, patch string) {
		for _, p := range PatchPaths(patch) {
			if p == "" || strings.ContainsAny(p, "\n") || p != strings.TrimSpace(p) {
				t.Fatalf("bad path %q from %q", p, patch)
			}
		}
	})
}

func TestEditPaths(t *testing.T) {
	for _, tc := range []struct {
		host, in string
		want     []string
	}{
		{Claude, `{"tool_name":"Edit","tool_input":{"file_path":"/r/a.go","old_string":"a","new_string":"b"}}`, []string{"/r/a.go"}},
		{Claude, `{"tool_name":"Write","tool_input":{"file_path":"/r/a.go","content":"x"}}`, []string{"/r/a.go"}},
		{Claude, `{"tool_name":"MultiEdit","tool_input":{"file_path":"/r/m.go","edits":[]}}`, []string{"/r/m.go"}},
		{Claude, `{"tool_name":"NotebookEdit","tool_input":{"notebook_path":"/r/n.ipynb","new_source":"x"}}`, []string{"/r/n.ipynb"}},
		{Claude, `{"tool_name":"Bash","tool_input":{"command":"go test ./..."}}`, nil},
		{Claude, `{"tool_name":"Bash","tool_input":{"command":"sed -i s/a/b/ /r/a.go && echo x > b.go"}}`, []string{"/r/a.go", "b.go"}},
		{Codex, `{"tool_name":"Bash","tool_input":{"command":"apply_patch <<'EOF'\n*** Begin Patch\n*** Update File: src/api.ts\n*** End Patch\nEOF\n"}}`, []string{"src/api.ts"}},
		{Codex, `{"tool_name":"shell","tool_input":{"command":["bash","-lc","tee out.md < in.md"]}}`, []string{"out.md"}},
		{Codex, `{"tool_name":"shell","tool_input":{"command":["rm","-f","it's.go"]}}`, []string{"it's.go"}},
		{Gemini, `{"tool_name":"run_shell_command","tool_input":{"command":"mv a.go b.go"}}`, []string{"a.go", "b.go"}},
		{Cursor, `{"tool_name":"Shell","command":"rm x.go"}`, []string{"x.go"}},
		{Cursor, `{"tool_name":"Write","tool_input":{"file_path":"/w/y.go"}}`, []string{"/w/y.go"}},
		{Claude, `{"tool_name":"Read","tool_input":{"file_path":"/r/a.go"}}`, nil},
		{Claude, `{"tool_name":"Edit","tool_input":{"file_path":""}}`, nil},
		{Claude, `{"tool_name":"Edit","tool_input":"nonsense"}`, nil},
		{Claude, `{"tool_name":"apply_patch","tool_input":{"command":"*** Update File: a.go"}}`, nil},
		{Codex, `{"tool_name":"apply_patch","tool_input":{"command":"*** Update File: a.go\n*** Update File: a.go"}}`, []string{"a.go"}},
		{Codex, `{"tool_name":"Bash","tool_input":{"command":"*** Update File: a.go"}}`, nil},
		{Codex, `{"tool_name":"apply_patch","tool_input":{"command":42}}`, nil},
		{Gemini, `{"tool_name":"replace","tool_input":{"file_path":"src/x.go"}}`, []string{"src/x.go"}},
		{Gemini, `{"tool_name":"Edit","tool_input":{"file_path":"src/x.go"}}`, nil},
	} {
		p, ok := parsePayload([]byte(tc.in))
		if !ok {
			t.Fatalf("parsePayload(%s) failed", tc.in)
		}
		if got := editPaths(tc.host, p); !reflect.DeepEqual(got, tc.want) {
			t.Errorf("%s %s: editPaths = %q, want %q", tc.host, tc.in, got, tc.want)
		}
	}
	if _, ok := parsePayload([]byte(`{"tool_name":`)); ok {
		t.Error("truncated JSON parsed")
	}
	// Arguments of another shape: the payload stands, with no paths.
	if p, ok := parsePayload([]byte(`{"session_id":"s1","tool_name":"Edit","tool_input":{"file_path":5,"path":"/r/x.go"}}`)); !ok || p.SessionID != "s1" || editPaths(Claude, p) != nil {
		t.Errorf("tool_input of another shape: %+v, %v", p, ok)
	}
	if _, ok := parsePayload([]byte(`{"session_id":5,"tool_name":"Edit","tool_input":{"file_path":"/r/a.go"}}`)); ok {
		t.Error("a payload whose session_id is a number parsed")
	}
}

func TestSessionTag(t *testing.T) {
	for _, tc := range []struct{ host, id, want string }{
		{Claude, "5f2b7c1e-93aa-4c1b-b7a2-0d9e1c3f4a55", "5f2b7c1e"},
		{Claude, "abc", "abc"},
		{Claude, "", ""},
		{Claude, "ab\x1b[31m\"cd ef", "ab31mcde"},
		{Codex, "019a2b3c-0000-7000-8000-00000000beef", "0000beef"},
		{Gemini, "9d8c7b6a-1111", "9d8c7b6a"},
	} {
		if got := SessionTag(tc.host, tc.id); got != tc.want {
			t.Errorf("SessionTag(%s, %q) = %q, want %q", tc.host, tc.id, got, tc.want)
		}
	}
}
