package cmdutil

import (
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/git-rally/git-rally/facts"
)

// RoomOptions are room's flags.
type RoomOptions struct {
	Compact bool
	Budget  int
	Paths   []string
	J       JSONFlags
}

type peerJSON struct {
	Tool     string `json:"tool"`
	Session  string `json:"session,omitempty"`
	State    string `json:"state"`
	LastSeen string `json:"last_seen"`
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

// RoomJSON is room --json.
type RoomJSON struct {
	Head      string            `json:"head"`
	Clock     int64             `json:"clock"`
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

// Room prints the room (room, room --compact).
func Room(f *Factory, opts *RoomOptions) error {
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
	out := ToRoomJSON(room)
	out.Sessions = roomSessions(st)
	out.Plans = roomPlans(st)
	addRoomVerdicts(v, &out, room)
	out.Totals.Ignored = f.Opened().Ignored
	printRoom(f.Out, out, now, f.Paint())
	return nil
}

func repoPaths(f *Factory, args []string) ([]string, error) {
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
		Access: OrDefault(c.Fact.Access, facts.Exclusive), Subject: facts.Sanitize(c.Fact.Subject, 0), At: c.Fact.At,
		LeaseExpiresAt: lease, LeaseState: c.LeaseState, OwnerState: c.OwnerState,
		Contested: c.Contested, HeldOver: c.HeldOver}
}

func toHandoffJSON(h facts.HandoffView) handoffJSON {
	return handoffJSON{ID: h.Fact.ID, From: h.Fact.Tool, Target: h.Fact.Target, Subject: facts.Sanitize(h.Fact.Subject, 0),
		At: h.Fact.At, AckBy: h.Fact.AckBy, Overdue: h.Overdue, State: h.State, Delivery: h.Delivery}
}

func toNoteJSON(n *facts.Fact) noteJSON {
	return noteJSON{ID: n.ID, Kind: n.Kind, Tool: n.Tool, Session: n.Session, Subject: facts.Sanitize(n.Subject, 0),
		Scopes: n.Scopes, Severity: n.Severity, Ref: n.Ref, At: n.At}
}

// ToRoomJSON is the room as room --json prints it.
func ToRoomJSON(r *facts.Room) RoomJSON {
	out := toRoomJSONWithout(r)
	out.Claims = make([]claimJSON, 0, len(r.Claims))
	for _, c := range r.Claims {
		out.Claims = append(out.Claims, toClaimJSON(c))
	}
	return out
}

// toRoomJSONWithout is ToRoomJSON with no claims.
func toRoomJSONWithout(r *facts.Room) RoomJSON {
	out := RoomJSON{Head: r.Head, Clock: r.Clock, Peers: []peerJSON{}, Claims: []claimJSON{}, Handoffs: []handoffJSON{},
		Blockers: []noteJSON{}, Risks: []noteJSON{}, Worktrees: []worktreeJSON{},
		Totals: totalsJSON{Facts: r.Facts, Retracted: r.Retracted, ByKind: r.ByKind}}
	for _, p := range r.Peers {
		out.Peers = append(out.Peers, peerJSON{Tool: p.Tool, Session: p.Session, State: p.State, LastSeen: facts.FormatTime(p.LastSeen),
			Activity: p.Activity, ActivitySince: p.ActivitySince})
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
func addRoomVerdicts(v *facts.Verifier, out *RoomJSON, room *facts.Room) {
	if v == nil {
		return
	}
	for i, p := range room.Peers {
		out.Peers[i].Verified = VerdictOf(v, p.LastID, p.Tool)
	}
	for i := range out.Claims {
		out.Claims[i].Verified = VerdictOf(v, out.Claims[i].ID, out.Claims[i].Tool)
	}
	for i := range out.Handoffs {
		out.Handoffs[i].Verified = VerdictOf(v, out.Handoffs[i].ID, out.Handoffs[i].From)
	}
}

// OrDefault is s, or d when s is empty.
func OrDefault(s, d string) string {
	if s == "" {
		return d
	}
	return s
}

// Ago is how long before now the stored time at was ("5m ago").
func Ago(now time.Time, at string) string {
	t, err := time.Parse(time.RFC3339Nano, at)
	if err != nil {
		return "?"
	}
	return facts.Ago(now.Sub(t)) + " ago"
}

func printRoom(w io.Writer, r RoomJSON, now time.Time, pt Painter) {
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
	fmt.Fprintf(w, "room at %s, clock %d, %s (%d retracted%s)\n", head, r.Clock, Plural(r.Totals.Facts, "fact"), r.Totals.Retracted, ign)
	fmt.Fprintf(w, "\npeers (%d)\n", len(r.Peers))
	for _, p := range r.Peers {
		who := p.Tool
		if p.Session != "" {
			who += "@" + p.Session
		}
		fmt.Fprintf(w, "  %-32s %s last seen %s%s%s\n", who, PaintState(pt, fmt.Sprintf("%-7s", p.State)), Ago(now, p.LastSeen), ActivityTag(pt, now, p.Activity, p.ActivitySince), VerdictTag(p.Verified))
	}
	fmt.Fprintf(w, "\nclaims (%d)\n", len(r.Claims))
	for _, c := range r.Claims {
		who := c.Tool
		if c.Session != "" {
			who += "@" + c.Session
		}
		extra := ""
		if c.Contested {
			extra = " " + pt(CRed, "CONTESTED") + " by " + c.HeldOver
		}
		lease := "lease live until " + LocalTime(c.LeaseExpiresAt, time.Local)
		if c.LeaseState == "expired" {
			lease = pt(CRed, "lease expired") + " since " + LocalTime(c.LeaseExpiresAt, time.Local) + " (still blocks)"
		}
		fmt.Fprintf(w, "  %s %-28s %s %s, %s, owner %s%s%s\n", c.ID, who, strings.Join(c.Scopes, " "), c.Access,
			lease, PaintState(pt, c.OwnerState), extra, VerdictTag(c.Verified))
	}
	fmt.Fprintf(w, "\nhandoffs (%d)\n", len(r.Handoffs))
	for _, h := range r.Handoffs {
		od := ""
		if h.Overdue {
			od = " " + pt(CRed, "OVERDUE")
		}
		fmt.Fprintf(w, "  %s %s -> %s [%s%s] %s (%s)%s\n", h.ID, h.From, h.Target, PaintState(pt, h.State), od, facts.Sanitize(h.Subject, 120), Ago(now, h.At), VerdictTag(h.Verified))
	}
	if len(r.Blockers) > 0 {
		fmt.Fprintf(w, "\nblockers (%d)\n", len(r.Blockers))
		for _, b := range r.Blockers {
			fmt.Fprintf(w, "  %s %s %s %s\n", b.ID, b.Tool, strings.Join(b.Scopes, " "), facts.Sanitize(b.Subject, 120))
		}
	}
	if len(r.Risks) > 0 {
		fmt.Fprintf(w, "\nrisks (%d)\n", len(r.Risks))
		for _, b := range r.Risks {
			fmt.Fprintf(w, "  %s %s %s\n", b.ID, b.Tool, facts.Sanitize(b.Subject, 120))
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
