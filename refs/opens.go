package refs

import "sync/atomic"

// Opens counts what a process opened: the configuration read (ReadConfig,
// ReadConfigWith), the repository's config file read from disk by either
// (worktree.Discover counts its own read in ConfigFile too), and object
// stores opened. Tests read it to show that a command opens each once;
// counting costs an atomic add.
var Opens struct {
	Config, ConfigFile, Store atomic.Int64
}

// ResetOpens zeroes Opens.
func ResetOpens() {
	Opens.Config.Store(0)
	Opens.ConfigFile.Store(0)
	Opens.Store.Store(0)
}
