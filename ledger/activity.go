package ledger

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/git-rally/git-rally/facts"
)

// activityPath is the machine-local note of the activity this machine
// last recorded for the owner: a hook run before every tool call skips
// the ledger when it says the activity is unchanged. Deleting it costs one
// ledger read (and at most one repeated status fact).
func activityPath(commonDir string, o facts.Owner) string {
	sum := sha256.Sum256([]byte(o.String()))
	return filepath.Join(commonDir, "rally", "activity", hex.EncodeToString(sum[:10]))
}

// NotedActivity is what this machine last recorded as the owner's
// activity, "" when it does not know. It reads one small file.
func NotedActivity(commonDir string, o facts.Owner) string {
	b, err := os.ReadFile(activityPath(commonDir, o))
	if err != nil {
		return ""
	}
	owner, act, ok := strings.Cut(strings.TrimSpace(string(b)), "\n")
	if !ok || owner != o.String() {
		return ""
	}
	return act
}

func noteActivity(commonDir string, o facts.Owner, activity string) {
	p := activityPath(commonDir, o)
	if activity == "" {
		os.Remove(p)
		return
	}
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		return
	}
	tmp := fmt.Sprintf("%s.%d.tmp", p, os.Getpid())
	if os.WriteFile(tmp, []byte(o.String()+"\n"+activity+"\n"), 0o644) != nil || os.Rename(tmp, p) != nil {
		os.Remove(tmp)
	}
}

// SetActivity records the owner's activity as one status fact, only when
// it differs from the activity the ledger holds (checked under the
// ledger's lock, so two hooks racing write it once). A subject (a person's
// note) is always written. It returns the fact written, nil when nothing
// changed. The machine-local note follows the ledger.
func (l *Ledger) SetActivity(o facts.Owner, activity, subject string) (*facts.Fact, error) {
	common := l.cache.common()
	fs, err := l.Append(func(st *facts.State, now time.Time) ([]*facts.Fact, error) {
		if cur, _ := st.ActivityOf(o); cur == activity && subject == "" {
			noteActivity(common, o, activity)
			return nil, nil
		}
		noteActivity(common, o, activity)
		return []*facts.Fact{{Kind: facts.KindStatus, Tool: o.Tool, Session: o.Session, Status: activity, Subject: subject}}, nil
	})
	if err != nil {
		noteActivity(common, o, "") // the ledger decides next time
		return nil, err
	}
	if len(fs) == 0 {
		return nil, nil
	}
	return fs[0], nil
}

// CommonDir is the repository's common dir the ledger lives in.
func (l *Ledger) CommonDir() string { return l.cache.common() }
