package delivery

import (
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/git-rally/git-rally/facts"
)

// Entry is one queued message: what inject or a handoff asked to deliver
// while the session could not take it. Only ids and the sender's words
// are kept; the handoff itself is read from the ledger when it is handed
// over (a handoff answered meanwhile is not delivered any more).
type Entry struct {
	Handoff     string `json:"handoff,omitempty"`
	Text        string `json:"text,omitempty"`
	From        string `json:"from"`
	FromSession string `json:"from_session,omitempty"`
	At          string `json:"at"`
	Why         string `json:"why,omitempty"`
	file        string
}

// queueDir is the session's queue, machine-local under the common dir
// (SPEC §1: nothing machine-local in the ledger). A session name is a
// label rally made (letters, digits, - _ .); anything else is hashed.
func queueDir(common, session string) string {
	name := session
	for _, r := range session {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '-' || r == '_' || r == '.') {
			name = ""
			break
		}
	}
	if name == "" || strings.HasPrefix(name, ".") || len(name) > 100 {
		name = "x" + hex.EncodeToString([]byte(session))
		if len(name) > 100 {
			name = name[:100]
		}
	}
	return filepath.Join(common, "rally", "queue", name)
}

// Enqueue adds a message to the session's queue. A handoff already queued
// for it is not queued twice.
func Enqueue(common, session string, e Entry, now time.Time) error {
	dir := queueDir(common, session)
	if e.Handoff != "" {
		for _, q := range pending(dir) {
			if q.Handoff == e.Handoff {
				return nil
			}
		}
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	e.At = facts.FormatTime(now)
	b, err := json.Marshal(e)
	if err != nil {
		return err
	}
	var r [4]byte
	rand.Read(r[:])
	// named by the machine's clock, not the injected one: the names only
	// keep the queue in the order messages came
	name := fmt.Sprintf("%020d-%s.json", time.Now().UnixNano(), hex.EncodeToString(r[:]))
	tmp := filepath.Join(dir, "."+name+".tmp")
	if err := os.WriteFile(tmp, b, 0o644); err != nil {
		return err
	}
	return os.Rename(tmp, filepath.Join(dir, name))
}

func pending(dir string) []Entry {
	des, err := os.ReadDir(dir)
	if err != nil {
		return nil
	}
	var names []string
	for _, de := range des {
		if n := de.Name(); strings.HasSuffix(n, ".json") && !strings.HasPrefix(n, ".") {
			names = append(names, n)
		}
	}
	sort.Strings(names)
	var out []Entry
	for _, n := range names {
		b, err := os.ReadFile(filepath.Join(dir, n))
		if err != nil {
			continue
		}
		var e Entry
		if json.Unmarshal(b, &e) != nil {
			os.Remove(filepath.Join(dir, n)) // damaged: not rally's any more
			continue
		}
		e.file = filepath.Join(dir, n)
		out = append(out, e)
	}
	return out
}

// Pending lists the session's queued messages, oldest first, without
// taking them.
func Pending(common, session string) []Entry { return pending(queueDir(common, session)) }

// Waiting says whether anything is queued for the session: one directory
// read, for the hooks that run at every turn's end.
func Waiting(common, session string) bool {
	des, err := os.ReadDir(queueDir(common, session))
	if err != nil {
		return false
	}
	for _, de := range des {
		if n := de.Name(); strings.HasSuffix(n, ".json") && !strings.HasPrefix(n, ".") {
			return true
		}
	}
	return false
}

// Take removes the session's queued messages and returns them, oldest
// first. Each is taken by one process only (a rename), so two hooks
// racing never hand one message over twice.
func Take(common, session string) []Entry {
	var out []Entry
	for _, e := range Pending(common, session) {
		taken := filepath.Join(filepath.Dir(e.file), fmt.Sprintf(".%s.taken-%d", filepath.Base(e.file), os.Getpid()))
		if os.Rename(e.file, taken) != nil {
			continue // another process took it
		}
		os.Remove(taken)
		out = append(out, e)
	}
	return out
}

// Requeue puts back messages that were taken but could not be handed over.
func Requeue(common, session string, es []Entry, now time.Time) {
	for i, e := range es {
		Enqueue(common, session, e, now.Add(time.Duration(i)))
	}
}

// DeliveryFact is the delivery fact of a message handed to the session of
// tool to: authored by its sender, as inject writes it.
func DeliveryFact(from facts.Owner, to, session string, handoff *facts.Fact, text string) *facts.Fact {
	f := &facts.Fact{Kind: facts.KindDelivery, Tool: from.Tool, Session: from.Session, Target: to, Name: session, Status: Status}
	if handoff != nil {
		f.Ref = handoff.ID
		f.Subject = "delivered handoff " + handoff.ID + " to session " + session
	} else {
		f.Subject = "delivered a message to session " + session
		f.Body = text
	}
	return f
}

// Handover is what a host's hook gives the agent of the queued messages
// it takes: their text (several lines each) and the delivery facts to
// append. A handoff that is no longer open, or no longer for this tool, is
// dropped. find resolves a handoff id in the ledger.
func Handover(es []Entry, to, session string, open func(id string) *facts.Fact) (text string, fs []*facts.Fact) {
	var blocks []string
	for _, e := range es {
		from := facts.Owner{Tool: e.From, Session: e.FromSession}
		if facts.CheckTool(e.From) != nil {
			continue
		}
		var h *facts.Fact
		if e.Handoff != "" {
			if h = open(e.Handoff); h == nil {
				continue
			}
		} else if strings.TrimSpace(e.Text) == "" {
			continue
		}
		blocks = append(blocks, Message{Handoff: h, Text: e.Text, From: e.From, To: to}.Block())
		fs = append(fs, DeliveryFact(from, to, session, h, e.Text))
	}
	return strings.Join(blocks, "\n\n"), fs
}
