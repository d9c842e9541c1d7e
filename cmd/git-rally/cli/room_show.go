package cli

import (
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/git-rally/git-rally/cmd/git-rally/cli/cmdutil"
	"github.com/git-rally/git-rally/facts"
	"github.com/git-rally/git-rally/ledger"
)

func newCmdRoom(f *factory) *cobra.Command {
	opts := &roomOptions{}
	c := &cobra.Command{
		Use:   "room [--compact] [--budget-bytes N] [--path P]",
		Short: "The live room: peers, claims, handoffs, blockers, risks, worktrees",
		Args:  cobra.NoArgs,
		RunE:  func(c *cobra.Command, args []string) error { return runRoom(f.Factory, opts) },
	}
	c.Flags().BoolVar(&opts.Compact, "compact", false, "only what the caller must act on, within --budget-bytes")
	c.Flags().IntVar(&opts.Budget, "budget-bytes", 6000, "byte budget of --compact")
	c.Flags().StringArrayVar(&opts.Paths, "path", nil, "only claims touching this path (repeat)")
	c.Flags().BoolVar(&opts.Wide, "wide", false, "never cut a line to the terminal's width ($COLUMNS, else the terminal, else 100)")
	addJSONFlags(c, &opts.J)
	return c
}

// roomOptions are room's flags.
type roomOptions struct {
	Compact bool
	Budget  int
	Paths   []string
	Wide    bool
	J       cmdutil.JSONFlags
}

type peerJSON struct {
	Tool     string `json:"tool"`
	Session  string `json:"session,omitempty"`
	State    string `json:"state"`
	LastSeen string `json:"last_seen"`
	Subject  string `json:"subject,omitempty"` // its latest enter --subject
	Verified string `json:"verified,omitempty"`
	// Activity is what the peer last said it is doing (SPEC §13).
	Activity      string `json:"activity,omitempty"`
	ActivitySince string `json:"activity_since,omitempty"`
}

type claimJSON struct {
	ID             string   `json:"id"`
	Tool           string   `json:"tool"`
	Session        string   `json:"session,omitempty"`
	Scopes         []string `json:"scopes"`
	Access         string   `json:"access"`
	Subject        string   `json:"subject,omitempty"`
	At             string   `json:"at"`
	LeaseExpiresAt string   `json:"lease_expires_at"`
	LeaseState     string   `json:"lease_state"`
	OwnerState     string   `json:"owner_state"`
	Contested      bool     `json:"contested"`
	HeldOver       string   `json:"contested_by,omitempty"`
	Verified       string   `json:"verified,omitempty"`
}

type handoffJSON struct {
	ID       string `json:"id"`
	From     string `json:"from"`
	Target   string `json:"target"`
	Subject  string `json:"subject"`
	At       string `json:"at"`
	AckBy    string `json:"ack_by,omitempty"`
	Overdue  bool   `json:"overdue"`
	State    string `json:"state"`
	Verified string `json:"verified,omitempty"`
	// Delivery is the latest delivery's status (sent_unverified) when it
	// was delivered to a managed session.
	Delivery string `json:"delivery,omitempty"`
	// Reason is the target's when it rejected the handoff.
	Reason string `json:"reason,omitempty"`
}

type noteJSON struct {
	ID       string   `json:"id"`
	Kind     string   `json:"kind"`
	Tool     string   `json:"tool"`
	Session  string   `json:"session,omitempty"`
	Subject  string   `json:"subject"`
	Scopes   []string `json:"scopes,omitempty"`
	Severity string   `json:"severity,omitempty"`
	Ref      string   `json:"ref,omitempty"`
	At       string   `json:"at"`
}

type worktreeJSON struct {
	Name    string `json:"name"`
	Path    string `json:"path"`
	Branch  string `json:"branch"`
	Base    string `json:"base,omitempty"`
	Tool    string `json:"tool"`
	Session string `json:"session"`
	Status  string `json:"status,omitempty"`
}

type totalsJSON struct {
	Facts     int            `json:"facts"`
	Retracted int            `json:"retracted"`
	ByKind    map[string]int `json:"by_kind"`
	// Ignored counts other tools' facts that are not verified, which
	// rally.requireSigned keeps from acting.
	Ignored int `json:"ignored,omitempty"`
}

// roomJSON is room --json.
type roomJSON struct {
	Head      string            `json:"head"`
	Clock     int64             `json:"clock"`
	Lead      *string           `json:"lead"` // the lead seat's holder, null when empty
	Peers     []peerJSON        `json:"peers"`
	Claims    []claimJSON       `json:"claims"`
	Handoffs  []handoffJSON     `json:"handoffs"`
	Blockers  []noteJSON        `json:"blockers"`
	Risks     []noteJSON        `json:"risks"`
	Worktrees []worktreeJSON    `json:"worktrees"`
	Sessions  []roomSessionJSON `json:"sessions"`
	Plans     []roomPlanJSON    `json:"plans,omitempty"`
	Totals    totalsJSON        `json:"totals"`
	// stream, when set, holds the claims instead of Claims: writeRoomJSON
	// converts them one at a time.
	stream *claimStream
}

// runRoom prints the room (room, room --compact).
func runRoom(f *cmdutil.Factory, opts *roomOptions) error {
	if opts.Compact {
		return runRoomCompact(f, opts)
	}
	st, err := f.State()
	if err != nil {
		return err
	}
	now := f.MustNow()
	room := st.Room(now)
	if len(opts.Paths) > 0 {
		paths, err := repoPaths(f, opts.Paths)
		if err != nil {
			return err
		}
		room.Claims = claimsTouching(room.Claims, paths)
	}
	v, err := f.Verifier()
	if err != nil {
		return err
	}
	if opts.J.On() {
		// The claims go from the views straight into the output.
		out := toRoomJSONWithout(room)
		out.Sessions, out.Plans, out.Totals.Ignored = roomSessions(st), roomPlans(st), f.Opened().Ignored
		addRoomVerdicts(v, &out, room)
		out.stream = &claimStream{views: room.Claims, verifier: v}
		return f.PrintJSON(&opts.J, &out)
	}
	out := toRoomJSON(room)
	out.Sessions = roomSessions(st)
	out.Plans = roomPlans(st)
	addRoomVerdicts(v, &out, room)
	out.Totals.Ignored = f.Opened().Ignored
	me := ""
	if o, err := f.Identity(); err == nil {
		me = o.String()
	}
	printRoom(&fitWriter{w: f.Out, width: roomWidth(f.Out, opts.Wide)}, out, now, f.Paint(), me)
	return nil
}

func repoPaths(f *cmdutil.Factory, args []string) ([]string, error) {
	pc, err := f.PathContext()
	if err != nil {
		return nil, err
	}
	var out []string
	for _, a := range args {
		s, err := facts.ParseScope(a, pc)
		if err != nil {
			return nil, err
		}
		out = append(out, s.String())
	}
	return out, nil
}

// claimsTouching keeps the claims whose scopes overlap any of the scopes.
func claimsTouching(cs []facts.ClaimView, scopes []string) []facts.ClaimView {
	var out []facts.ClaimView
	for _, c := range cs {
		if _, _, ok := facts.ScopesConflict(c.Fact.Scopes, facts.Exclusive, scopes, facts.Exclusive); ok {
			out = append(out, c)
		}
	}
	return out
}

func toClaimJSON(c facts.ClaimView) claimJSON {
	return toClaimJSONLease(c, facts.FormatTime(c.LeaseExpires))
}

// toClaimJSONLease is toClaimJSON with the lease time formatted already.
func toClaimJSONLease(c facts.ClaimView, lease string) claimJSON {
	return claimJSON{ID: c.Fact.ID, Tool: c.Fact.Tool, Session: c.Fact.Session, Scopes: c.Fact.Scopes,
		Access: orDefault(c.Fact.Access, facts.Exclusive), Subject: facts.Sanitize(c.Fact.Subject, 0), At: c.Fact.At,
		LeaseExpiresAt: lease, LeaseState: c.LeaseState, OwnerState: c.OwnerState,
		Contested: c.Contested, HeldOver: c.HeldOver}
}

func toHandoffJSON(h facts.HandoffView) handoffJSON {
	return handoffJSON{ID: h.Fact.ID, From: h.Fact.Tool, Target: h.Fact.Target, Subject: facts.Sanitize(h.Fact.Subject, 0),
		At: h.Fact.At, AckBy: h.Fact.AckBy, Overdue: h.Overdue, State: h.State, Delivery: h.Delivery, Reason: facts.Sanitize(h.Reason, 0)}
}

func toNoteJSON(n *facts.Fact) noteJSON {
	return noteJSON{ID: n.ID, Kind: n.Kind, Tool: n.Tool, Session: n.Session, Subject: facts.Sanitize(n.Subject, 0),
		Scopes: n.Scopes, Severity: n.Severity, Ref: n.Ref, At: n.At}
}

// toRoomJSON is the room as room --json prints it.
func toRoomJSON(r *facts.Room) roomJSON {
	out := toRoomJSONWithout(r)
	out.Claims = make([]claimJSON, 0, len(r.Claims))
	for _, c := range r.Claims {
		out.Claims = append(out.Claims, toClaimJSON(c))
	}
	return out
}

// toRoomJSONWithout is toRoomJSON with no claims.
func toRoomJSONWithout(r *facts.Room) roomJSON {
	out := roomJSON{Head: r.Head, Clock: r.Clock, Peers: []peerJSON{}, Claims: []claimJSON{}, Handoffs: []handoffJSON{},
		Blockers: []noteJSON{}, Risks: []noteJSON{}, Worktrees: []worktreeJSON{},
		Totals: totalsJSON{Facts: r.Facts, Retracted: r.Retracted, ByKind: r.ByKind}}
	if r.Lead != "" {
		lead := r.Lead
		out.Lead = &lead
	}
	for _, p := range r.Peers {
		out.Peers = append(out.Peers, peerJSON{Tool: p.Tool, Session: p.Session, State: p.State, LastSeen: facts.FormatTime(p.LastSeen),
			Subject: facts.Sanitize(p.Subject, 0), Activity: p.Activity, ActivitySince: p.ActivitySince})
	}
	for _, h := range r.Handoffs {
		out.Handoffs = append(out.Handoffs, toHandoffJSON(h))
	}
	for _, b := range r.Blockers {
		out.Blockers = append(out.Blockers, toNoteJSON(b))
	}
	for _, b := range r.Risks {
		out.Risks = append(out.Risks, toNoteJSON(b))
	}
	for _, w := range r.Worktrees {
		out.Worktrees = append(out.Worktrees, worktreeJSON{Name: w.Name, Path: w.Path, Branch: w.Branch, Base: w.Base,
			Tool: w.Tool, Session: w.Session, Status: w.Status})
	}
	if out.Totals.ByKind == nil {
		out.Totals.ByKind = map[string]int{}
	}
	return out
}

// addRoomVerdicts sets the verdict of every peer (its latest fact), claim
// and handoff; out's lists are in room's order.
func addRoomVerdicts(v *ledger.Verifier, out *roomJSON, room *facts.Room) {
	if v == nil {
		return
	}
	for i, p := range room.Peers {
		out.Peers[i].Verified = verdictOf(v, p.LastID, p.Tool)
	}
	for i := range out.Claims {
		out.Claims[i].Verified = verdictOf(v, out.Claims[i].ID, out.Claims[i].Tool)
	}
	for i := range out.Handoffs {
		out.Handoffs[i].Verified = verdictOf(v, out.Handoffs[i].ID, out.Handoffs[i].From)
	}
}

// orDefault is s, or d when s is empty.
func orDefault(s, d string) string {
	if s == "" {
		return d
	}
	return s
}

// ago is how long before now the stored time at was ("5m ago").
func ago(now time.Time, at string) string {
	t, err := time.Parse(time.RFC3339Nano, at)
	if err != nil {
		return "?"
	}
	return facts.Ago(now.Sub(t)) + " ago"
}

// RoomNewest is how many blockers and risks the human room lists; the
// rest are counted (room --json lists them all).
const RoomNewest = 5

// newest returns the RoomNewest newest of ns (oldest first), after a line
// counting the older ones it leaves out.
func newest(w io.Writer, ns []noteJSON, what string) []noteJSON {
	if len(ns) <= RoomNewest {
		return ns
	}
	fmt.Fprintf(w, "  ... %d older %s not shown (git rally room --json lists them all)\n", len(ns)-RoomNewest, what)
	return ns[len(ns)-RoomNewest:]
}

func printRoom(w io.Writer, r roomJSON, now time.Time, pt cmdutil.Painter, me string) {
	head := r.Head
	if len(head) > 12 {
		head = head[:12]
	}
	if head == "" {
		head = "(no ledger yet: git rally init)"
	}
	ign := ""
	if r.Totals.Ignored > 0 {
		ign = fmt.Sprintf(", %d ignored: not verified (rally.requireSigned)", r.Totals.Ignored)
	}
	fmt.Fprintf(w, "room at %s, clock %d, %s (%d retracted%s)\n", head, r.Clock, plural(r.Totals.Facts, "fact"), r.Totals.Retracted, ign)
	if r.Lead != nil {
		fmt.Fprintf(w, "lead: %s\n", facts.Sanitize(*r.Lead, 128))
	}
	fmt.Fprintf(w, "\npeers (%d)\n", len(r.Peers))
	for _, p := range r.Peers {
		who := p.Tool
		if p.Session != "" {
			who += "@" + p.Session
		}
		subj := ""
		if p.Subject != "" {
			subj = ": " + facts.Sanitize(p.Subject, 400)
		}
		if who == me {
			who += " (you)"
		}
		fmt.Fprintf(w, "  %-32s %s last seen %s%s%s%s\n", who, cmdutil.PaintState(pt, fmt.Sprintf("%-7s", p.State)), ago(now, p.LastSeen), cmdutil.ActivityTag(pt, now, p.Activity, p.ActivitySince), subj, verdictTag(p.Verified))
	}
	fmt.Fprintf(w, "\nclaims (%d)\n", len(r.Claims))
	for _, c := range r.Claims {
		who := c.Tool
		if c.Session != "" {
			who += "@" + c.Session
		}
		extra := ""
		if c.Contested {
			extra = " " + pt(cmdutil.CRed, "CONTESTED") + " by " + c.HeldOver
		}
		lease := "lease live until " + cmdutil.LocalTime(c.LeaseExpiresAt, time.Local)
		if c.LeaseState == "expired" {
			lease = pt(cmdutil.CRed, "lease expired") + " since " + cmdutil.LocalTime(c.LeaseExpiresAt, time.Local) + " (still blocks)"
		}
		// Two lines, so that a claim fits 100 columns: who holds what,
		// then the lease, the owner's state and what the claim is for.
		if who == me {
			who += " (you)"
		}
		fmt.Fprintf(w, "  %s %s %s %s%s%s\n", c.ID, who, strings.Join(c.Scopes, " "), c.Access, extra, verdictTag(c.Verified))
		for_ := ""
		if c.Subject != "" {
			for_ = "; for " + facts.Sanitize(c.Subject, 400)
		}
		fmt.Fprintf(w, "      %s, owner %s%s\n", lease, cmdutil.PaintState(pt, c.OwnerState), for_)
	}
	fmt.Fprintf(w, "\nhandoffs (%d)\n", len(r.Handoffs))
	for _, h := range r.Handoffs {
		od := ""
		if h.Overdue {
			od = " " + pt(cmdutil.CRed, "OVERDUE")
		}
		if h.Reason != "" {
			od += " (" + facts.Sanitize(h.Reason, 400) + ")"
		}
		if h.Delivery != "" {
			od += ", delivered: " + h.Delivery
		}
		fmt.Fprintf(w, "  %s %s -> %s [%s%s] %s (%s)%s\n", h.ID, h.From, h.Target, cmdutil.PaintState(pt, h.State), od, facts.Sanitize(h.Subject, 400), ago(now, h.At), verdictTag(h.Verified))
	}
	if len(r.Blockers) > 0 {
		fmt.Fprintf(w, "\nblockers (%d)\n", len(r.Blockers))
		for _, b := range newest(w, r.Blockers, "blockers") {
			scopes := strings.Join(b.Scopes, " ")
			if scopes == "" || scopes == facts.WorkspaceScope {
				scopes = "(whole room)"
				if r.Lead != nil && b.Tool == *r.Lead {
					scopes = pt(cmdutil.CRed, "ROOM FROZEN") + " by the lead:"
				}
			}
			fmt.Fprintf(w, "  %s %s %s %s (%s)\n", b.ID, b.Tool, scopes, facts.Sanitize(b.Subject, 400), ago(now, b.At))
		}
	}
	if len(r.Risks) > 0 {
		fmt.Fprintf(w, "\nrisks (%d)\n", len(r.Risks))
		for _, b := range newest(w, r.Risks, "risks") {
			fmt.Fprintf(w, "  %s %s %s (%s)\n", b.ID, b.Tool, facts.Sanitize(b.Subject, 400), ago(now, b.At))
		}
	}
	if len(r.Worktrees) > 0 {
		fmt.Fprintf(w, "\nworktrees (%d)\n", len(r.Worktrees))
		for _, t := range r.Worktrees {
			fmt.Fprintf(w, "  %-16s %s %s (%s)\n", t.Name, t.Branch, t.Path, t.Tool)
		}
	}
	printRoomSessions(w, r.Sessions)
	printRoomPlans(w, r.Plans)
}
