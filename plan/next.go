package plan

import (
	"fmt"
	"strings"
	"time"

	"github.com/git-rally/git-rally/facts"
)

// Urgency of the plan suggestions among next's (a handoff to answer is
// 100, a lease running out 75, an artifact to review 70).
const (
	scoreClose  = 85
	scoreReport = 80
	scoreTake   = 30
)

// Suggest adds what the open plans ask of me to next's answer: the taker
// of a task reports it, the lead closes a plan whose tasks are all done,
// and a peer that holds nothing is offered a ready task.
func Suggest(st *facts.State, me facts.Owner, now time.Time, np *facts.NextPlan) {
	flag := " --tool " + shellQuote(me.Tool)
	holdsTask := false
	var ready []string
	for _, b := range OpenBoards(st) {
		id := b.Plan.ID
		if b.CanClose && (b.Record.Lead() == me.Tool || st.LeadHolder() == me.Tool) {
			np.Insert(facts.Suggestion{Action: "close_plan", Ref: b.Record.Fact.ID,
				Reason:  fmt.Sprintf("every task of plan %s is reported with evidence (%d of %d); close it, then merge in the order `git rally worktree plan` suggests", facts.Sanitize(id, 64), b.Done, b.Total),
				Command: "git rally plan close " + shellQuote(id) + flag}, scoreClose)
		}
		for _, v := range b.Tasks {
			name := id + "/" + v.Task.ID
			switch {
			case v.State == Taken && v.Holder.Owner() == me:
				holdsTask = true
				check := "your check passes"
				if v.Task.Check != "" {
					check = "`" + facts.Sanitize(v.Task.Check, 200) + "` passes"
				}
				np.Insert(facts.Suggestion{Action: "report_task", Ref: v.Holder.ID,
					Reason:  fmt.Sprintf("you hold task %s; when %s, report it with evidence (a released claim is not a report)", facts.Sanitize(name, 130), check),
					Command: ReportCommand(id, v.Task) + flag}, scoreReport)
			case v.State == Ready:
				ready = append(ready, name)
			}
		}
	}
	if holdsTask || len(ready) == 0 || len(st.OwnedClaims(me)) > 0 {
		return
	}
	more := ""
	if len(ready) > 1 {
		more = fmt.Sprintf(" (%d tasks are ready)", len(ready))
	}
	np.Insert(facts.Suggestion{Action: "take_task", Ref: ready[0],
		Reason:  fmt.Sprintf("task %s is ready and nobody holds it%s; take it to claim its paths", facts.Sanitize(ready[0], 130), more),
		Command: "git rally plan take " + shellQuote(ready[0]) + flag}, scoreTake)
}

// ReportCommand is the exact command that reports a task, evidence to be
// filled in: the task's check when it has one.
func ReportCommand(planID string, t Task) string {
	ev := "<what shows it is done>"
	if t.Check != "" {
		ev = facts.Sanitize(t.Check, 200) + " passed"
	}
	return "git rally plan report " + shellQuote(planID+"/"+t.ID) + " --evidence " + shellQuote(ev) + " --revision HEAD"
}

// shellQuote quotes s for a POSIX shell when it needs it.
func shellQuote(s string) string {
	if s != "" && strings.Trim(s, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-.:/@+=,") == "" {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}
