// Package planyaml reads plan files written in YAML. It is apart from
// plan, which the room and next read in every hot command, so that only
// the commands that read a plan file link the YAML parser (its package
// initialisation would cost every hook and claim).
package planyaml

import (
	"encoding/json"

	"go.yaml.in/yaml/v3"

	"github.com/git-rally/git-rally/facts"
	"github.com/git-rally/git-rally/plan"
)

// Parse reads a plan file written in YAML: the same plan, checked the
// same way (it becomes JSON first, so one decoder judges both).
func Parse(data []byte) (*plan.Plan, error) {
	j, err := ToJSON(data)
	if err != nil {
		return nil, err
	}
	return plan.ParseConverted(j)
}

// ToJSON turns a YAML plan file into the JSON plan.ParseConverted reads.
func ToJSON(data []byte) ([]byte, error) {
	var v any
	if err := yaml.Unmarshal(data, &v); err != nil {
		return nil, &facts.UsageError{Msg: "the plan file does not parse: " + err.Error()}
	}
	j, err := json.Marshal(v)
	if err != nil {
		return nil, &facts.UsageError{Msg: "the plan file does not parse: it is not a JSON-shaped YAML document: " + err.Error()}
	}
	return j, nil
}
