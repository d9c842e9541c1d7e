package refs

import "strings"

// Fsync says what rally hardens with fsync, as git's core.fsync does for
// git: git's default (core.fsync unset) fsyncs packs and their metadata
// but neither loose objects nor refs, so an append by default fsyncs
// nothing either; core.fsync=committed (or reference, loose-object,
// objects, added, all) and the older core.fsyncObjectFiles ask for more.
// Fsyncing the ref alone, as rally did, hardened nothing on its own: the
// loose objects it names were not synced.
type Fsync struct {
	Refs    bool // the ledger ref, before its lock file is renamed over it
	Objects bool // every loose object, before it is renamed into place
}

// FsyncOf reads core.fsync (and core.fsyncObjectFiles) as git 2.36+
// does: the last value, a comma-separated list applied to the platform
// default, "-component" removes one unless another names it,
// "none" starts from nothing. (Checked against git 2.39's fsync calls.)
func FsyncOf(c *Config) Fsync {
	const (
		loose = 1 << iota
		pack
		packMeta
		commitGraph
		index
		reference
	)
	named := map[string]int{
		"loose-object": loose, "pack": pack, "pack-metadata": packMeta, "commit-graph": commitGraph,
		"index": index, "reference": reference,
		"objects":          loose | pack,
		"derived-metadata": packMeta | commitGraph,
		"committed":        loose | pack | reference,
		"added":            loose | pack | reference | index,
		"all":              loose | pack | packMeta | commitGraph | index | reference,
	}
	current := pack | packMeta | commitGraph // git's FSYNC_COMPONENTS_DEFAULT
	if v, ok := c.vals[normKey("core.fsync")]; ok && len(v) > 0 {
		positive, negative := 0, 0
		for _, tok := range strings.Split(v[len(v)-1], ",") {
			tok = strings.TrimSpace(tok)
			switch {
			case tok == "":
			case tok == "none":
				current = 0
			default:
				// git matches a component by prefix ("ref" is reference)
				neg := strings.HasPrefix(tok, "-")
				tok = strings.TrimPrefix(tok, "-")
				for name, bits := range named {
					if tok != "" && strings.HasPrefix(name, tok) {
						if neg {
							negative |= bits
						} else {
							positive |= bits
						}
					}
				}
			}
		}
		current = current&^negative | positive // git: what is named wins over what is removed
	}
	if c.Bool("core.fsyncObjectFiles") {
		current |= loose
	}
	return Fsync{Refs: current&reference != 0, Objects: current&loose != 0}
}
