package plan

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"path"
	"regexp"
	"strings"
	"sync"

	"github.com/git-rally/git-rally/facts"
)

// Plan is the plan file, and the body of a plan fact (with canonical
// scopes).
type Plan struct {
	ID    string `json:"id"`
	Goal  string `json:"goal,omitempty"`
	Tasks []Task `json:"tasks"`
}

// Task is one owned piece of the job.
type Task struct {
	ID        string   `json:"id"`
	Goal      string   `json:"goal,omitempty"`
	Owns      []string `json:"owns"`
	DependsOn []string `json:"depends_on"`
	Check     string   `json:"check,omitempty"`
	Agent     string   `json:"agent,omitempty"`
	// Args are added to the agent's command line when plan run starts
	// it (as after "--" of git rally run): a model, a flag.
	Args []string `json:"args,omitempty"`
}

// Task returns the task with this id, nil when there is none.
func (p *Plan) Task(id string) *Task {
	for i := range p.Tasks {
		if p.Tasks[i].ID == id {
			return &p.Tasks[i]
		}
	}
	return nil
}

// TaskIDs lists the task ids in file order.
func (p *Plan) TaskIDs() []string {
	out := make([]string, len(p.Tasks))
	for i, t := range p.Tasks {
		out[i] = t.ID
	}
	return out
}

// idRE is what a plan or task id may be: it becomes part of a scope
// (task:<plan>/<task>) and of commands an agent is told to run.
var idRE = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$`) })

// ValidID reports whether s can be a plan or task id.
func ValidID(s string) bool { return idRE().MatchString(s) }

// Parse reads a plan file (JSON). A file that is not a plan (bad JSON,
// wrong types, unknown keys, a missing or malformed plan id) is a usage
// error; everything else about the plan is for Lint.
func Parse(data []byte) (*Plan, error) { return parse(data, true) }

// ParseConverted reads a plan that another format (YAML: package
// planyaml) became as JSON: checked as Parse checks, without positions in
// the JSON text, which the reader never saw.
func ParseConverted(data []byte) (*Plan, error) { return parse(data, false) }

// IsYAML tells a YAML plan from a JSON one by its name (.yaml, .yml), or,
// with no telling name, by its first character.
func IsYAML(name string, data []byte) bool {
	switch strings.ToLower(path.Ext(name)) {
	case ".yaml", ".yml":
		return true
	case ".json":
		return false
	}
	t := bytes.TrimSpace(data)
	return len(t) > 0 && t[0] != '{'
}

func parse(data []byte, positions bool) (*Plan, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	var p Plan
	if err := dec.Decode(&p); err != nil {
		msg := strings.TrimPrefix(err.Error(), "json: ")
		if positions {
			msg = jsonProblem(data, err)
		}
		return nil, &facts.UsageError{Msg: "the plan file does not parse: " + msg,
			Hint: `a plan is {"id": "...", "goal": "...", "tasks": [{"id": "...", "owns": ["dir:src/api"], "depends_on": [], "check": "..."}]}`}
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return nil, &facts.UsageError{Msg: "the plan file does not parse: text after the plan object"}
	}
	if !ValidID(p.ID) {
		return nil, &facts.UsageError{Msg: fmt.Sprintf("the plan file does not parse: plan id %q: want 1-64 letters, digits, '.', '_' or '-'", p.ID)}
	}
	if len(p.Tasks) == 0 {
		return nil, &facts.UsageError{Msg: fmt.Sprintf("the plan file does not parse: plan %s has no tasks", p.ID)}
	}
	return &p, nil
}

// jsonProblem says where a decoding error is, as line:column.
func jsonProblem(data []byte, err error) string {
	var off int64 = -1
	var se *json.SyntaxError
	var te *json.UnmarshalTypeError
	switch {
	case errors.As(err, &se):
		off = se.Offset
	case errors.As(err, &te):
		off = te.Offset
	}
	msg := strings.TrimPrefix(err.Error(), "json: ")
	if off < 0 || off > int64(len(data)) {
		return msg
	}
	line := 1 + bytes.Count(data[:off], []byte("\n"))
	col := int(off) - bytes.LastIndexByte(data[:off], '\n')
	return fmt.Sprintf("line %d, column %d: %s", line, col, msg)
}

// Encode is the plan as a plan fact's body: compact JSON.
func (p *Plan) Encode() string {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(p); err != nil {
		panic(err) // a Plan always encodes
	}
	return strings.TrimSpace(buf.String())
}

// Decode reads the plan of a plan fact. The body was linted when it was
// started, but facts arrive from remotes too: unknown keys are allowed.
func Decode(rec *facts.PlanRecord) (*Plan, error) {
	var p Plan
	if err := json.Unmarshal([]byte(rec.Fact.Body), &p); err != nil {
		return nil, fmt.Errorf("plan fact %s: its body is not a plan: %w", rec.Fact.ID, err)
	}
	if p.ID == "" {
		p.ID = rec.ID()
	}
	return &p, nil
}
