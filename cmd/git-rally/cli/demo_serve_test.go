package cli

import (
	"errors"
	"net/url"
	"testing"

	"github.com/git-rally/git-rally/facts"
)

// A choice the runner page cannot play is the program's one usage error,
// which the web API answers with 400 (web.Server.api), as the command
// line answers it with exit 2.
func TestDemoRunnerBadChoiceIsUsage(t *testing.T) {
	d := &demoRunner{cache: map[demoChoices][]byte{}}
	for _, q := range []url.Values{
		{"agents": {"many"}},
		{"agents": {"99"}},
		{"receiver": {"robot"}},
		{"layout": {"tower"}},
	} {
		_, err := d.Demo(q)
		var ue *facts.UsageError
		if !errors.As(err, &ue) {
			t.Errorf("%v: %v (%T), want a usage error", q, err, err)
		}
	}
}
