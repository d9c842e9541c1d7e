package cli

import (
	"fmt"
	"path"
	"strings"
	"time"
)

// demoChoices are what the reader picks; the whole run follows from them.
type demoChoices struct {
	Agents     int    `json:"agents"`
	Overlap    bool   `json:"overlap"`
	Handoff    bool   `json:"handoff"`
	Receiver   string `json:"receiver"`
	Layout     string `json:"layout"`
	TimePasses bool   `json:"time_passes"`
}

func (c demoChoices) validate() error {
	if c.Agents < 2 || c.Agents > 8 {
		return &usageError{Msg: fmt.Sprintf("--agents %d is out of range: 2 to 8 agents", c.Agents), Hint: "git rally demo --agents 3"}
	}
	switch c.Receiver {
	case "unmanaged", "managed":
	default:
		return &usageError{Msg: fmt.Sprintf("--receiver %q: managed or unmanaged", c.Receiver), Hint: "git rally demo --handoff --receiver unmanaged"}
	}
	switch c.Layout {
	case "worktrees", "shared":
	default:
		return &usageError{Msg: fmt.Sprintf("--layout %q: worktrees or shared", c.Layout), Hint: "git rally demo --layout worktrees"}
	}
	return nil
}

// demoAgent is one fixed identity of the demo.
type demoAgent struct {
	Tool    string `json:"tool"`
	Name    string `json:"name"`
	Wants   string `json:"wants"`
	Task    string `json:"task"`
	Dir     string `json:"dir"` // where its commands run, relative to the repository
	Session string `json:"session,omitempty"`
	Managed bool   `json:"managed,omitempty"` // started by git rally run
}

var demoCast = []demoAgent{
	{Tool: "claude_code:impl-1", Name: "impl-1", Wants: "src/api.ts", Task: "building the API"},
	{Tool: "codex:verify-1", Name: "verify-1", Wants: "test/api_test.ts", Task: "writing the API tests"},
	{Tool: "gemini:docs-1", Name: "docs-1", Wants: "docs/api.md", Task: "documenting the API"},
	{Tool: "opencode:ui-1", Name: "ui-1", Wants: "src/ui/", Task: "building the page"},
	{Tool: "claude_code:impl-2", Name: "impl-2", Wants: "src/db.ts", Task: "building the storage"},
	{Tool: "codex:verify-2", Name: "verify-2", Wants: "test/db_test.ts", Task: "writing the storage tests"},
	{Tool: "gemini:docs-2", Name: "docs-2", Wants: "docs/db.md", Task: "documenting the storage"},
	{Tool: "opencode:ui-2", Name: "ui-2", Wants: "styles/theme.css", Task: "styling the page"},
}

// demoFiles is the repository the demo starts from (one commit).
var demoFiles = []string{"README.md", "src/api.ts", "src/db.ts", "src/ui/app.tsx", "test/api_test.ts",
	"test/db_test.ts", "docs/api.md", "docs/db.md", "styles/theme.css"}

// demoStart is the demo's first instant; every step's RALLY_NOW counts from it.
var demoStart = time.Date(2026, 1, 5, 9, 0, 0, 0, time.UTC)

// demoStep is one command of the run. Exactly one of args (git rally),
// git (plain git) or edit (a file append, shown as printf) is set.
type demoStep struct {
	Say  string
	Who  int // agent index, -1 for the person running the demo
	At   time.Time
	Args []string
	Git  []string
	Edit *demoEdit
	Want int
	Save string // remember the id the step printed first under this name
}

type demoEdit struct{ Path, Line string }

// demoScript turns choices into the steps. It is pure: the same choices
// give the same steps.
func demoScript(c demoChoices) ([]demoStep, []demoAgent) {
	agents := make([]demoAgent, c.Agents)
	copy(agents, demoCast)
	wt := c.Layout == "worktrees"
	managed := c.Handoff && c.Receiver == "managed"
	for i := range agents {
		if managed && i == 1 {
			// git rally run names it: session <agent>-<label>-NN, tool <family>:<label>-NN.
			a := &agents[i]
			family, label, _ := strings.Cut(a.Tool, ":")
			a.Managed, a.Session, a.Tool = true, family+"-"+label+"-01", family+":"+label+"-01"
			if wt {
				a.Dir = ".rally/worktrees/" + a.Session
			}
			continue
		}
		if wt {
			agents[i].Dir = ".rally/worktrees/" + agents[i].Name
			agents[i].Session = agents[i].Name
		}
	}
	b := &demoBuilder{c: c, agents: agents, t: demoStart}
	a1, a2 := 0, 1
	n1, n2 := agents[a1].Tool, agents[a2].Tool

	b.run(-1, 0, "Set up the room: the ledger is the git ref refs/rally/ledger; nothing else in the repository changes.", "init")
	for i, a := range agents {
		switch {
		case a.Managed:
			family, _, _ := strings.Cut(a.Tool, ":")
			args := []string{"run", family, "--name", a.Name, "--command-json", `["demo-agent"]`}
			say := fmt.Sprintf("Rally starts %s as a managed session in a worktree of its own, reachable in its terminal (here a stand-in terminal and a fake agent: no tmux needed).", a.Name)
			if !wt {
				args = append(args, "--shared")
				say = fmt.Sprintf("Rally starts %s as a managed session in the main checkout (--shared), reachable in its terminal (here a stand-in terminal and a fake agent: no tmux needed).", a.Name)
			}
			b.run(-1, 0, say, args...)
			b.run(i, 0, fmt.Sprintf("The fake agent in %s says it waits at its prompt (a status fact; Claude Code, Codex and Gemini CLI say so from their own hooks): rally hands a session a message only then, never into a dialog.", a.Session),
				"status", "idle")
		case wt:
			b.run(-1, 0, fmt.Sprintf("Give %s a worktree of its own on branch rally/%s; inside it rally knows who is speaking, no --tool needed.", short(a.Tool), a.Name),
				"worktree", "add", a.Name, "--tool", agents[i].Tool)
		}
	}
	for i, a := range agents {
		b.run(i, 0, fmt.Sprintf("%s enters the room: a presence fact, so the others see it is here and what it does.", short(a.Tool)),
			"enter", "--subject", a.Task)
	}
	if !wt {
		b.run(a2, 0, fmt.Sprintf("All %d agents share one checkout and branch main: one agent's commit takes what the others staged. %s records the hazard as a risk.", c.Agents, short(n2)),
			"risk", "--subject", fmt.Sprintf("shared-branch-hazard: %d agents edit main in one checkout", c.Agents), "--severity", "warn")
	}
	for i, a := range agents {
		args := []string{"claim", a.Wants}
		say := fmt.Sprintf("%s claims %s before editing it: a one-file claim has a 30-minute lease.", short(a.Tool), a.Wants)
		if a.Wants[len(a.Wants)-1] == '/' {
			say = fmt.Sprintf("%s claims the directory %s: every path below it is its own; a wider claim has a 120-minute lease.", short(a.Tool), a.Wants)
		}
		if c.TimePasses && i >= 2 {
			args = append(args, "--lease", "4h")
			say = fmt.Sprintf("%s claims %s for 4 hours (--lease): it expects a long job.", short(a.Tool), a.Wants)
		}
		b.run(i, 0, say, args...)
	}
	b.run(a1, 0, fmt.Sprintf("%s also holds the dev server's port while it runs it (any scope can be claimed, not only paths).", short(n1)),
		"claim", "port:8080", "--subject", "dev server")
	if c.Overlap {
		b.run(a2, 3, fmt.Sprintf("%s wants %s too: refused with exit 3, nothing is written, and it is told who holds it and what to do.", short(n2), agents[a1].Wants),
			"claim", agents[a1].Wants)
		b.run(a2, 0, fmt.Sprintf("Before an edit, the write check answers stop for %s: someone active holds that file (exit 0; 4 with --strict).", short(n2)),
			"check", "before-write", agents[a1].Wants)
	}
	if c.Handoff {
		b.save("HANDOFF").run(a1, 0, fmt.Sprintf("%s hands the endpoint's tests to %s, asking for an answer within 30 minutes. Recording is not delivery.", short(n1), short(n2)),
			"handoff", "--target", n2, "--subject", "test the new ping endpoint", "--file", agents[a1].Wants, "--ack-within", "30m")
		if c.Receiver == "unmanaged" {
			b.run(a2, 0, fmt.Sprintf("%s is not a session rally started, so nothing is pushed to it: it sees the handoff when it reads its inbox (its prompt hook shows it too).", short(n2)),
				"inbox")
		} else {
			b.run(-1, 0, fmt.Sprintf("%s is a managed session, so rally pasted the handoff into its terminal and recorded the delivery; delivery is not receipt. Its screen:", short(n2)),
				"capture", agents[a2].Session)
		}
		b.run(a2, 0, fmt.Sprintf("%s acknowledges: the handoff has arrived (acknowledged), it is not done yet.", short(n2)),
			"receipt", "@HANDOFF")
	}
	if wt {
		b.edit(a1, fmt.Sprintf("%s edits its file in its own worktree.", short(n1)), agents[a1].Wants, `export const ping = () => "pong";`)
		b.git(a1, fmt.Sprintf("%s commits on its branch rally/%s; the main checkout does not change.", short(n1), path.Base(agents[a1].Dir)),
			"commit", "-qam", "add the ping endpoint")
		b.edit(a2, fmt.Sprintf("%s writes its test.", short(n2)), agents[a2].Wants, `test("ping", () => expect(ping()).toBe("pong"));`)
		if c.Overlap {
			b.edit(a2, fmt.Sprintf("%s also edits %s although it was refused the claim: a claim is advice, not a lock.", short(n2), agents[a1].Wants),
				agents[a1].Wants, `export const ping = () => "PONG";`)
		}
		b.git(a2, fmt.Sprintf("%s commits on rally/%s.", short(n2), path.Base(agents[a2].Dir)), "commit", "-qam", "test the ping endpoint")
		b.run(-1, 0, "The merge plan, read-only: what each branch changed, which changes no claim covers, predicted conflicts and an order to merge in.",
			"worktree", "plan")
	}
	b.save("NOTE").run(a2, 0, fmt.Sprintf("%s notes something that turns out wrong...", short(n2)),
		"note", "--subject", "the dev server listens on port 3000")
	b.run(a2, 0, "...and retracts it. The note stays in the log; every view of the room ignores it from now on.",
		"retract", "@NOTE", "--reason", "it is 8080, see the port:8080 claim")
	if c.Handoff {
		b.run(a2, 0, fmt.Sprintf("%s has written the tests and resolves the handoff: the answer only its target can give.", short(n2)),
			"resolve", "@HANDOFF")
	}
	if c.TimePasses {
		demoTimePasses(b, c, a1, a2)
	} else {
		b.run(a1, 0, fmt.Sprintf("%s is done: leave closes every claim it holds.", short(n1)), "leave")
		b.run(a2, 0, fmt.Sprintf("Now %s's claim on %s goes through.", short(n2), agents[a1].Wants), "claim", agents[a1].Wants)
	}
	b.run(-1, 0, "The room at the end: who is here, who holds what, what waits for whom.", "room")
	b.git(-1, "The history as git itself shows it: one commit per append on refs/rally/ledger.",
		"log", "--oneline", "refs/rally/ledger")
	return b.steps, agents
}

// demoTimePasses is the second act: the first agent goes silent, its
// lease runs out but still blocks, a deadline passes, a takeover and the
// reaper close what it left.
func demoTimePasses(b *demoBuilder, c demoChoices, a1, a2 int) {
	n1, n2 := b.agents[a1].Tool, b.agents[a2].Tool
	b.run(a1, 0, fmt.Sprintf("%s takes the room's lead seat: it was empty, so the first assign gets it. Only the lead can freeze the room and close any plan.", short(n1)),
		"lead", "assign", "--to", n1)
	silent := b.lastOf[a1]
	sent := b.t
	b.save("ASK").run(a2, 0, fmt.Sprintf("%s asks %s for a review within 15 minutes; but %s's terminal closed at %s and it will not answer.",
		short(n2), short(n1), short(n1), silent.Format("15:04")),
		"handoff", "--target", n1, "--subject", "review the ping tests", "--ack-within", "15m")
	at := silent.Add(35 * time.Minute)
	if d := sent.Add(16 * time.Minute); d.After(at) {
		at = d
	}
	if at.Before(b.t) {
		at = b.t
	}
	b.t = at
	b.run(a2, 3, fmt.Sprintf("Time passes. %s's lease on %s expired, but an expired lease still blocks: only its owner, a takeover or the reaper frees it.",
		short(n1), b.agents[a1].Wants), "claim", b.agents[a1].Wants)
	b.run(-1, 0, "The room marks the lease expired and the owner idle.", "room")
	b.run(a2, 0, fmt.Sprintf("The deadline passed with no answer: %s's next lists it as overdue and records exactly one no-response risk.", short(n2)),
		"next")
	b.run(a2, 0, "Asking again writes no second risk: a deadline is reported once.", "next")
	b.run(a2, 3, fmt.Sprintf("A takeover is refused while the owner has been silent for less than 2 hours (%s was last seen at %s).", short(n1), silent.Format("15:04")),
		"claim", b.agents[a1].Wants, "--takeover")
	b.t = silent.Add(2*time.Hour + 5*time.Minute)
	b.run(a2, 0, fmt.Sprintf("Two hours of silence later the takeover goes through: one commit releases %s's claim (reason takeover) and records %s's.", short(n1), short(n2)),
		"claim", b.agents[a1].Wants, "--takeover")
	b.run(-1, 0, fmt.Sprintf("The reaper lists claims whose lease ran out while their owner stayed silent (%s's port:8080), and a lead silent for more than 2 hours.", short(n1)),
		"doctor", "--reap-stale")
	b.run(-1, 0, "With --apply it closes them, one claim.expired fact each, and empties the lead seat, authored by rally.",
		"doctor", "--reap-stale", "--apply")
	demoLeadFreeze(b, a1, a2)
}

// demoLeadFreeze: a new lead freezes the room for a release and lifts it.
func demoLeadFreeze(b *demoBuilder, a1, a2 int) {
	n2 := b.agents[a2].Tool
	other := a1
	if len(b.agents) > 2 {
		other = 2
	}
	no, file := b.agents[other].Tool, b.agents[other].Wants
	if other == a1 {
		file = "README.md" // its own file was taken over
	}
	b.run(a2, 0, fmt.Sprintf("The seat is empty again; %s takes it to cut a release.", short(n2)),
		"lead", "assign", "--to", n2)
	b.run(other, 3, "Anyone else's assign is refused (exit 3, the holder named, nothing written); --force would seize the seat and record whom it displaced.",
		"lead", "assign", "--to", no)
	b.save("FREEZE").run(a2, 0, "The lead's blocker with no scope freezes the room: every other peer's writes stop until the lead lifts it.",
		"blocker", "--subject", "release 1.0: hands off until it is tagged")
	b.run(other, 0, fmt.Sprintf("%s's write check now answers room-freeze (stop), naming the lead and how the freeze is lifted; strict hooks deny the edit.", short(no)),
		"check", "before-write", file)
	b.run(a2, 0, "The release is tagged; only the lead lifts the freeze.", "resolve", "@FREEZE")
}

type demoBuilder struct {
	c      demoChoices
	agents []demoAgent
	t      time.Time
	steps  []demoStep
	next   string
	lastOf map[int]time.Time
}

func (b *demoBuilder) save(name string) *demoBuilder { b.next = name; return b }

func (b *demoBuilder) add(s demoStep) {
	s.At, s.Save = b.t, b.next
	b.next = ""
	b.steps = append(b.steps, s)
	if s.Who >= 0 && s.Args != nil {
		if b.lastOf == nil {
			b.lastOf = map[int]time.Time{}
		}
		b.lastOf[s.Who] = b.t
	}
	b.t = b.t.Add(20 * time.Second)
}

func (b *demoBuilder) run(who, want int, say string, args ...string) {
	if who >= 0 && b.c.Layout != "worktrees" {
		args = append(args, "--tool", b.agents[who].Tool)
	}
	b.add(demoStep{Say: say, Who: who, Args: args, Want: want})
}

func (b *demoBuilder) git(who int, say string, args ...string) {
	b.add(demoStep{Say: say, Who: who, Git: args})
}

func (b *demoBuilder) edit(who int, say, path, line string) {
	b.add(demoStep{Say: say, Who: who, Edit: &demoEdit{Path: path, Line: line}})
}

// short is a tool's family, for the story's prose.
func short(tool string) string {
	for i := 0; i < len(tool); i++ {
		if tool[i] == ':' {
			return tool[:i] + " (" + tool[i+1:] + ")"
		}
	}
	return tool
}
