package cli

import (
	"errors"
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	"github.com/git-rally/git-rally/facts"
)

type handoffOptions struct {
	target, subject, body, revision, ackWithin, ref string
	files                                           []string
	noDeliver                                       bool
	j                                               jsonFlags
}

func newCmdHandoff(f *factory) *cobra.Command {
	opts := &handoffOptions{}
	c := &cobra.Command{
		Use:   "handoff --target <tool> --subject <text> [--body] [--file P]... [--revision R] [--ack-within D]",
		Short: "Record who should take what (recording is not delivery; delivery is not acceptance)",
		Args:  cobra.NoArgs,
		RunE:  func(c *cobra.Command, args []string) error { return runHandoff(f, opts) },
	}
	c.Flags().StringVar(&opts.target, "target", "", "the receiving tool id")
	c.Flags().StringVar(&opts.subject, "subject", "", "one line: what to take")
	c.Flags().StringVar(&opts.body, "body", "", "details")
	c.Flags().StringArrayVar(&opts.files, "file", nil, "a path that goes with it (repeat)")
	c.Flags().StringVar(&opts.revision, "revision", "", "a git revision that goes with it")
	c.Flags().StringVar(&opts.ackWithin, "ack-within", "", "reply deadline, e.g. 30m or 2h")
	c.Flags().BoolVar(&opts.noDeliver, "no-deliver", false, "only record it, even when the target is a live managed session")
	c.Flags().StringVar(&opts.ref, "ref", "", "a handoff of yours its target rejected: this one reassigns it")
	addJSONFlags(c, &opts.j)
	return c
}

func runHandoff(f *factory, opts *handoffOptions) error {
	o, err := f.Identity()
	if err != nil {
		return err
	}
	if opts.target == "" {
		return &usageError{Msg: "handoff needs --target <tool>", Hint: "git rally room   # see who is here"}
	}
	if strings.TrimSpace(opts.subject) == "" {
		return &usageError{Msg: "handoff needs --subject <text>"}
	}
	if opts.target == o.Tool {
		return usagef("handoff to yourself (%s)", o.Tool)
	}
	fact := &facts.Fact{Kind: facts.KindHandoff, Tool: o.Tool, Session: o.Session, Target: opts.target,
		Subject: opts.subject, Body: opts.body}
	if opts.ref != "" {
		if fact.Ref, err = findFactID(f, opts.ref); err != nil {
			return err
		}
	}
	if fact.Files, err = repoFiles(f, opts.files); err != nil {
		return err
	}
	if opts.revision != "" {
		rev, err := resolveRevision(f, opts.revision)
		if err != nil {
			return err
		}
		fact.Revision = rev
	}
	if opts.ackWithin != "" {
		d, err := parseDuration("--ack-within", opts.ackWithin)
		if err != nil {
			return err
		}
		fact.AckBy = facts.FormatTime(f.MustNow().Add(d))
	}
	if !opts.noDeliver {
		return handoffAndDeliver(f, &opts.j, fact, o)
	}
	_, err = f.AppendFacts(&opts.j, facts.Simple(fact))
	return err
}

// findFactID resolves an id or a unique prefix to a fact id.
func findFactID(f *factory, id string) (string, error) {
	l, err := f.Ledger()
	if err != nil {
		return "", err
	}
	t, err := l.Find(id)
	if err != nil {
		return "", err
	}
	if t.Kind != facts.KindHandoff {
		return "", usagef("--ref %s is a %s; a handoff reassigns a handoff", t.ID, t.Kind)
	}
	return t.ID, nil
}

func resolveRevision(f *factory, rev string) (string, error) {
	r, err := f.Repo()
	if err != nil {
		return "", err
	}
	id, err := r.Commit(rev)
	var ue *facts.UsageError
	if errors.As(err, &ue) {
		return "", &usageError{Msg: fmt.Sprintf("--revision %q is not a commit in this repository", rev), Hint: "git log --oneline -5"}
	}
	return id, err
}

type answerOptions struct {
	subject, body, reason string
	reject                bool
	j                     jsonFlags
}

// newCmdAnswer builds receipt and resolve: the target's answers to a
// handoff (resolve also lifts a blocker or a risk).
func newCmdAnswer(f *factory, kind string) *cobra.Command {
	opts := &answerOptions{}
	short := "Acknowledge a handoff addressed to you (arrived, not done)"
	if kind == facts.KindResolve {
		short = "Resolve a handoff addressed to you, or lift a blocker or risk"
	}
	c := &cobra.Command{
		Use:   kind + " <id>",
		Short: short,
		Args:  cobra.ExactArgs(1),
		RunE: func(c *cobra.Command, args []string) error {
			o, err := f.Identity()
			if err != nil {
				return err
			}
			l, err := f.Ledger()
			if err != nil {
				return err
			}
			target, err := l.Find(args[0])
			if err != nil {
				return err
			}
			fact := &facts.Fact{Kind: kind, Tool: o.Tool, Session: o.Session, Ref: target.ID, Subject: opts.subject, Body: opts.body}
			if opts.reject {
				fact.Status, fact.Reason = facts.Rejected, opts.reason
			} else if opts.reason != "" {
				return usagef("--reason goes with --reject")
			}
			_, err = f.AppendFacts(&opts.j, facts.Answer(fact, target))
			return err
		},
	}
	c.Flags().StringVar(&opts.subject, "subject", "", "one line")
	c.Flags().StringVar(&opts.body, "body", "", "details")
	if kind == facts.KindReceipt {
		c.Use = "receipt <id> [--reject --reason <text>]"
		c.Flags().BoolVar(&opts.reject, "reject", false, "refuse the handoff: it leaves your inbox and goes back to its sender with --reason")
		c.Flags().StringVar(&opts.reason, "reason", "", "why you reject it (with --reject)")
	}
	addJSONFlags(c, &opts.j)
	return c
}

type artifactOptions struct {
	ref, target, subject, body, uri, revision string
	files, evidence                           []string
	j                                         jsonFlags
}

func newCmdArtifact(f *factory) *cobra.Command {
	opts := &artifactOptions{}
	c := &cobra.Command{
		Use:   "artifact [--ref <id>] --subject <text> [--uri U] [--file P]... [--evidence E]...",
		Short: "Record a result; with --ref to a handoff addressed to you, it resolves the handoff",
		Args:  cobra.NoArgs,
		RunE: func(c *cobra.Command, args []string) error {
			o, err := f.Identity()
			if err != nil {
				return err
			}
			fact := &facts.Fact{Kind: facts.KindArtifact, Tool: o.Tool, Session: o.Session, Target: opts.target,
				Subject: opts.subject, Body: opts.body, URI: opts.uri, Evidence: opts.evidence}
			if fact.Files, err = repoFiles(f, opts.files); err != nil {
				return err
			}
			if opts.revision != "" {
				if fact.Revision, err = resolveRevision(f, opts.revision); err != nil {
					return err
				}
			}
			fn := facts.Simple(fact)
			if opts.ref != "" {
				l, err := f.Ledger()
				if err != nil {
					return err
				}
				target, err := l.Find(opts.ref)
				if err != nil {
					return err
				}
				fact.Ref = target.ID
				fn = facts.Answer(fact, target)
			}
			_, err = f.AppendFacts(&opts.j, fn)
			return err
		},
	}
	c.Flags().StringVar(&opts.ref, "ref", "", "the handoff (or fact) this answers")
	c.Flags().StringVar(&opts.target, "target", "", "who should review it")
	c.Flags().StringVar(&opts.subject, "subject", "", "one line")
	c.Flags().StringVar(&opts.body, "body", "", "details")
	c.Flags().StringVar(&opts.uri, "uri", "", "a link")
	c.Flags().StringVar(&opts.revision, "revision", "", "a git revision")
	c.Flags().StringArrayVar(&opts.files, "file", nil, "a path (repeat)")
	c.Flags().StringArrayVar(&opts.evidence, "evidence", nil, "an evidence line (repeat)")
	addJSONFlags(c, &opts.j)
	return c
}

// repoFiles makes --file paths repository-relative, refusing any that
// leave the repository.
func repoFiles(f *factory, paths []string) ([]string, error) {
	if len(paths) == 0 {
		return nil, nil
	}
	pc, err := f.PathContext()
	if err != nil {
		return nil, err
	}
	out := make([]string, 0, len(paths))
	for _, p := range paths {
		rp, err := facts.RepoPath(p, pc, true)
		if err != nil {
			return nil, err
		}
		out = append(out, rp)
	}
	return out, nil
}
