package childrun

import "runtime"

// LeanProcs gives a lean child binary (brood-child, brood-child-openai)
// one P, GOMAXPROCS=1, unless the user chose GOMAXPROCS (getenv): a
// subagent spends its life waiting on its model and its tools' processes,
// and its Go code (the agent loop, the SDK's stream, JSON, the in-process
// Read, Grep and Glob, each a single goroutine) needs one core. With the
// default (one P per core) every idle P's thread spins looking for work
// whenever a goroutine wakes, and every extra thread is one more stop in
// each of the sandbox's AllThreadsSyscall calls: about 2.5 ms of a child's
// 20 ms of CPU at K=16 on 2 cores (docs/performance.md, "Where a
// subagent's CPU goes"). What it gives up: parallel tool calls that are
// CPU-bound in Go run one at a time. The programs the child starts (Bash)
// are not affected: GOMAXPROCS is not put in their environment.
func LeanProcs(getenv func(string) string) {
	if getenv("GOMAXPROCS") != "" {
		return
	}
	runtime.GOMAXPROCS(1)
}
