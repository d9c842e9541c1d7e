package session

import (
	"fmt"
	"path/filepath"
	"strings"
	"time"

	"github.com/git-rally/git-rally/delivery"
	"github.com/git-rally/git-rally/facts"
	"github.com/git-rally/git-rally/ledger"
)

// DeliveryStatus is the only status a delivery can honestly claim: the
// text reached the host; whether the agent read it only its own fact (a
// receipt) can say.
const DeliveryStatus = delivery.Status

// Delivery is a message for a managed session: a handoff, or free text.
type Delivery struct {
	Session *facts.Fact // the session's latest session fact
	Handoff *facts.Fact // nil for --text
	Text    string
	Sender  facts.Owner // who delivers (the delivery fact's author)
}

func (d *Delivery) message() delivery.Message {
	return delivery.Message{Handoff: d.Handoff, Text: d.Text, From: d.Sender.Tool, To: d.Session.Tool}
}

// Message is the message as a host's hook hands it over: several lines,
// every one of them inert (delivery.Inert).
func (d *Delivery) Message() string { return d.message().Block() }

// Line is the message as rally pastes it into a terminal: one inert line.
func (d *Delivery) Line() string { return d.message().Line() }

// Check refuses a delivery rally must not make: a session that is not
// live, a handoff for another tool. It writes nothing.
func (d *Delivery) Check(live map[string]bool) error {
	s := d.Session
	if st := StateOf(s, live); st != StateLive {
		return &facts.RefusedError{Msg: fmt.Sprintf("session %s is %s: nothing to deliver into", facts.Sanitize(s.Name, 80), st),
			Hint: "git rally sessions"}
	}
	if h := d.Handoff; h != nil {
		if h.Kind != facts.KindHandoff {
			return &facts.UsageError{Msg: fmt.Sprintf("%s is a %s, not a handoff", h.ID, h.Kind), Hint: "git rally inject " + s.Name + " --text \"...\""}
		}
		if h.Target != s.Tool && h.Target != "all" {
			return &facts.RefusedError{Msg: fmt.Sprintf("handoff %s is for %s, not for %s (session %s)", h.ID,
				facts.Sanitize(h.Target, 128), facts.Sanitize(s.Tool, 128), facts.Sanitize(s.Name, 80)),
				Hint: "git rally sessions (inject it into the session of " + facts.Sanitize(h.Target, 128) + ")"}
		}
	} else if strings.TrimSpace(d.Text) == "" {
		return &facts.UsageError{Msg: "inject needs --handoff <id> or --text <text>"}
	}
	return facts.CheckText("text", d.Text, facts.MaxBody)
}

// Fact is the delivery fact: who delivered what to which session's tool.
func (d *Delivery) Fact() *facts.Fact {
	return delivery.DeliveryFact(d.Sender, d.Session.Tool, d.Session.Name, d.Handoff, d.Text)
}

// Result is what a delivery did: pasted (Facts holds the delivery fact)
// or queued until the session is idle at its own prompt (Why says why).
type Result struct {
	Facts  []*facts.Fact
	Queued bool
	Why    string
}

// Foregrounder is a backend that can tell which program a target's
// terminal runs in its foreground (tmux: #{pane_current_command}).
type Foregrounder interface {
	Foreground(target string) (string, error)
}

// shells are programs rally never types into: whatever it pasted would run
// as a command line.
var shells = map[string]bool{"sh": true, "bash": true, "dash": true, "zsh": true, "fish": true, "ksh": true, "mksh": true,
	"pdksh": true, "oksh": true, "loksh": true, "tcsh": true, "csh": true, "ash": true, "busybox": true, "nu": true, "xonsh": true,
	"elvish": true, "pwsh": true, "powershell": true, "yash": true, "rc": true, "es": true, "rbash": true}

// IsShell says whether a foreground program is a shell ("-bash", a login
// shell, and "/bin/zsh" count).
func IsShell(prog string) bool {
	prog = filepath.Base(strings.TrimPrefix(strings.TrimSpace(prog), "-"))
	return shells[prog]
}

// DeliveryPlan decides how a message reaches the session now (SPEC §13): only at
// its own idle prompt. A known host (claude, codex, gemini, opencode)
// that is working, waits for a person or has reported nothing yet gets it
// queued, and its hooks hand it over when it is next idle. A custom
// command or an adopted pane that reports nothing gets it pasted, unless
// its foreground program is a shell: a shell is never typed into.
func DeliveryPlan(st *facts.State, b Backend, s *facts.Fact) (paste bool, why string) {
	activity, since := ActivityOf(st, s)
	_, known := LookupHost(s.Agent)
	switch {
	case activity == facts.ActivityIdle:
		return true, ""
	case activity != "":
		why = fmt.Sprintf("%s is %s", facts.Sanitize(s.Tool, 128), facts.Sanitize(activity, 40))
		if activity == facts.ActivityNeedsInput {
			why += " (it waits for a person: a prompt or a dialog)"
		}
		if t, err := time.Parse(time.RFC3339Nano, since); err == nil {
			why += " since " + t.UTC().Format("15:04:05")
		}
		return false, why
	case known:
		return false, fmt.Sprintf("%s has not reported that it waits at its prompt yet", facts.Sanitize(s.Tool, 128))
	}
	fg, ok := b.(Foregrounder)
	if !ok {
		return true, ""
	}
	prog, err := fg.Foreground(s.Target)
	if err != nil {
		return false, "its terminal's foreground program is unknown (" + facts.Sanitize(err.Error(), 200) + ")"
	}
	if IsShell(prog) {
		return false, fmt.Sprintf("its terminal runs a shell (%s): rally never types into a shell", facts.Sanitize(prog, 40))
	}
	return true, ""
}

// IdleSettle is how long after a host's turn-end hook reported idle rally
// waits before it pastes: the hook runs before the host is back at its
// prompt (Gemini CLI drops an Enter that comes while it finishes its
// AfterAgent hooks). Measured on the machine's clock, not the ledger's:
// it is about the host's process, not a rule of the room.
var IdleSettle = 1500 * time.Millisecond

// ActivityOf is what a managed session's agent last said it is doing: as
// the session (tool@session), else as its tool alone (a session's tool id
// is its own; `git rally status --tool` outside its worktree says so).
func ActivityOf(st *facts.State, s *facts.Fact) (activity, since string) {
	if a, at := st.ActivityOf(facts.Owner{Tool: s.Tool, Session: s.Session}); a != "" {
		return a, at
	}
	return st.ActivityOf(facts.Owner{Tool: s.Tool})
}

func settling(st *facts.State, s *facts.Fact) time.Duration {
	activity, since := ActivityOf(st, s)
	t, err := time.Parse(time.RFC3339Nano, since)
	if activity != facts.ActivityIdle || err != nil {
		return 0
	}
	if wait := IdleSettle - time.Since(t); wait > 0 && wait <= IdleSettle {
		return wait
	}
	return 0
}

// Deliver hands the message to the session when it waits at its own
// prompt, as one inert line and one Enter, and then records one delivery
// fact; otherwise it queues the message for the session's hooks (or `git
// rally status idle`) to hand over, and records nothing yet. A paste that
// fails records nothing.
func Deliver(l *ledger.Ledger, b Backend, d *Delivery) (*Result, error) {
	live, err := b.Live()
	if err != nil {
		return nil, err
	}
	if err := d.Check(live); err != nil {
		return nil, err
	}
	f := d.Fact()
	if err := f.Validate(); err != nil {
		return nil, err
	}
	st, err := l.Read()
	if err != nil {
		return nil, err
	}
	paste, why := DeliveryPlan(st, b, d.Session)
	if wait := settling(st, d.Session); paste && wait > 0 {
		// the turn-end hook said idle, the host may still be on its way
		// back to its prompt: let it get there, then look again
		time.Sleep(wait)
		if st, err = l.Read(); err != nil {
			return nil, err
		}
		paste, why = DeliveryPlan(st, b, d.Session)
	}
	if !paste {
		e := delivery.Entry{Text: d.Text, From: d.Sender.Tool, FromSession: d.Sender.Session, Why: why}
		if d.Handoff != nil {
			e.Handoff, e.Text = d.Handoff.ID, ""
		}
		if err := delivery.Enqueue(l.CommonDir(), d.Session.Name, e, l.Now()); err != nil {
			return nil, fmt.Errorf("queueing the message for %s: %w", d.Session.Name, err)
		}
		return &Result{Queued: true, Why: why}, nil
	}
	if err := b.Paste(d.Session.Target, d.Line()); err != nil {
		return nil, fmt.Errorf("pasting into %s: %w", d.Session.Target, err)
	}
	fs, err := l.Append(func(st *facts.State, now time.Time) ([]*facts.Fact, error) { return []*facts.Fact{f}, nil })
	if err != nil {
		return nil, err
	}
	return &Result{Facts: fs}, nil
}
