package ledger

import (
	"fmt"

	"github.com/git-rally/git-rally/facts"
	"github.com/git-rally/git-rally/refs"
)

// oversizeWarning is the warning for a blob a stream skipped for being
// over refs.MaxBlob (SPEC §2): a corrupt fact, kept and synced unchanged.
func oversizeWarning(path string, data []byte) (string, bool) {
	size, ok := refs.Oversize(data)
	if !ok {
		return "", false
	}
	return fmt.Sprintf("skipping corrupt fact in %s: oversize: the blob is %d bytes; a fact is at most %d", facts.Sanitize(path, 200), size, refs.MaxBlob), true
}
