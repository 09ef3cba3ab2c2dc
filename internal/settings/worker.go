package settings

// Worker configures `brood worker`, a fleet worker.
type Worker struct {
	// Remotes are the git remotes the worker may fetch a submission's base
	// commit from (URLs or absolute paths). It fetches from its own entry
	// that names the submission's repository, never from the URL the
	// submission carries. Empty (the default): base commits come only from
	// bundles in the store.
	Remotes []string `toml:"remotes"`
}
