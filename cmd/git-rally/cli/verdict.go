package cli

import (
	"bytes"
	"encoding/json"

	"github.com/tidwall/gjson"

	"github.com/git-rally/git-rally/cmd/git-rally/cli/cmdutil"
	"github.com/git-rally/git-rally/facts"
	"github.com/git-rally/git-rally/ledger"
)

// verdictOf is v's verdict on a fact, "" without a verifier.
func verdictOf(v *ledger.Verifier, id, tool string) string {
	if v == nil || id == "" {
		return ""
	}
	return v.Verdict(id, tool)
}

// verdictTag is the verdict as human output shows it after a line.
func verdictTag(v string) string {
	if v == "" {
		return ""
	}
	return " [" + v + "]"
}

// withVerdict adds "verified" to a fact's stored JSON. A fact that carries
// a "verified" key of its own (a forger's) has it replaced.
func withVerdict(raw json.RawMessage, v string) json.RawMessage {
	if v == "" {
		return raw
	}
	if gjson.GetBytes(raw, "verified").Exists() {
		var m map[string]json.RawMessage
		if json.Unmarshal(raw, &m) == nil {
			m["verified"], _ = json.Marshal(v)
			if b, err := json.Marshal(m); err == nil {
				return b
			}
		}
		return raw
	}
	raw = bytes.TrimSpace(raw)
	if len(raw) < 2 || raw[len(raw)-1] != '}' {
		return raw
	}
	out := make([]byte, 0, len(raw)+24)
	out = append(out, raw[:len(raw)-1]...)
	if len(bytes.TrimSpace(raw[1:len(raw)-1])) > 0 {
		out = append(out, ',')
	}
	out = append(out, `"verified":"`...)
	out = append(out, v...)
	return append(out, `"}`...)
}

// factsWithVerdicts is rawFacts with each fact's verdict.
func factsWithVerdicts(v *ledger.Verifier, fs []*facts.Fact) []json.RawMessage {
	out := cmdutil.RawFacts(fs)
	if v == nil {
		return out
	}
	for i, fa := range fs {
		out[i] = withVerdict(out[i], v.Verdict(fa.ID, fa.Tool))
	}
	return out
}
