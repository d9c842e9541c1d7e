package cli

import (
	"fmt"

	"github.com/spf13/cobra"
)

type checkpointOptions struct {
	j jsonFlags
}

type checkpointJSON struct {
	Ref       string `json:"ref"`       // refs/rally/checkpoints/<name of the signing key>
	Commit    string `json:"commit"`    // the signed checkpoint commit
	Ledger    string `json:"ledger"`    // the ledger commit it is the projection of
	Facts     int    `json:"facts"`     // facts in the ledger at that commit
	Bytes     int    `json:"bytes"`     // size of the encoded projection
	Unchanged bool   `json:"unchanged"` // the ref already held a checkpoint of that commit
}

func newCmdCheckpoint(f *factory) *cobra.Command {
	opts := &checkpointOptions{}
	c := &cobra.Command{
		Use:   "checkpoint",
		Short: "Write a signed checkpoint of the room's projection, so clones that trust you start fast",
		Long: `checkpoint computes the projection of the ledger head from its facts and
writes it, signed with user.signingKey, as the commit
refs/rally/checkpoints/<name> (name: the first 16 hex digits of the SHA-256
of the key). git rally sync pushes it with the ledger.

A clone with no cache (a fresh clone, a CI runner) starts from the newest
checkpoint it trusts instead of reading every fact, and reads only the facts
added since. It trusts a checkpoint only when its signer is named by
rally.checkpointSigner (a principal of the allowed-signers file,
gpg.ssh.allowedSignersFile, or a public key in authorized_keys form), the
signature verifies, and the checkpoint's ledger commit is the head or an
ancestor of it; anything else is ignored and the projection is computed.
Trusting a signer means believing what it signs: a checkpoint of that key
that lies is believed.

Refused (exit 3) without user.signingKey or while facts dated in the future
are held back.`,
		Example: examples()["checkpoint"],
		Args:    cobra.NoArgs,
		RunE:    func(c *cobra.Command, args []string) error { return runCheckpoint(f, opts) },
	}
	addJSONFlags(c, &opts.j)
	return c
}

func runCheckpoint(f *factory, opts *checkpointOptions) error {
	l, err := f.Ledger()
	if err != nil {
		return err
	}
	res, err := l.WriteCheckpoint()
	if err != nil {
		return err
	}
	out := checkpointJSON{Ref: res.Ref, Commit: res.Commit.String(), Ledger: res.Ledger.String(),
		Facts: res.Facts, Bytes: res.Bytes, Unchanged: res.Unchanged}
	if opts.j.On() {
		return f.PrintJSON(&opts.j, out)
	}
	if res.Unchanged {
		fmt.Fprintf(f.Out, "%s already holds the checkpoint of %s (%s)\n", out.Ref, out.Ledger[:12], plural(out.Facts, "fact"))
		return nil
	}
	fmt.Fprintf(f.Out, "wrote %s: the projection of %s (%s, %d bytes), signed\n", out.Ref, out.Ledger[:12], plural(out.Facts, "fact"), out.Bytes)
	return nil
}
