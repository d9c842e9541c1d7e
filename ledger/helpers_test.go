package ledger

import (
	"fmt"
	"math/rand"
	"time"

	"github.com/git-rally/git-rally/facts"
)

// Copies of the facts package's test helpers.

var t0 = time.Date(2026, 3, 1, 10, 0, 0, 0, time.UTC)

// mk seals a fact at t0+sec with the given clock.
func mk(clock int64, sec int, f facts.Fact) *facts.Fact {
	f.V, f.Clock, f.At = 1, clock, facts.FormatTime(t0.Add(time.Duration(sec)*time.Second))
	if f.Kind == facts.KindClaim && f.Access == "" {
		f.Access = facts.Exclusive
	}
	f.Seal()
	return &f
}

func at(sec int) time.Time { return t0.Add(time.Duration(sec) * time.Second) }

func pick(rng *rand.Rand, all []*facts.Fact, kind string) string {
	var ids []string
	for _, f := range all {
		if kind == "" || f.Kind == kind {
			ids = append(ids, f.ID)
		}
	}
	if len(ids) == 0 {
		return ""
	}
	return ids[rng.Intn(len(ids))]
}

func authorOf(all []*facts.Fact, id string) string {
	for _, f := range all {
		if f.ID == id {
			return f.Tool
		}
	}
	return "x"
}

func roomKey(r *facts.Room) string {
	s := fmt.Sprintf("facts=%d retracted=%d lead=%s peers=", r.Facts, r.Retracted, r.Lead)
	for _, p := range r.Peers {
		s += p.Tool + ":" + p.State + ","
	}
	s += " claims="
	for _, c := range r.Claims {
		s += fmt.Sprintf("%s:%v,", c.Fact.ID, c.Contested)
	}
	s += " handoffs="
	for _, h := range r.Handoffs {
		s += h.Fact.ID + ":" + h.State + ":" + h.Reason + ","
	}
	s += " blockers="
	for _, b := range r.Blockers {
		s += b.ID + ","
	}
	s += " risks="
	for _, b := range r.Risks {
		s += b.ID + ","
	}
	return s
}
