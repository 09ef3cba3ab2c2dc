package cmdutil

import "fmt"

// Times is a call's wait and its run, apart: "queued 3.1s for a worker,
// ran 412ms" (what: what it waited for).
func Times(queuedMS, ranMS int64, what string) string {
	d := func(ms int64) string {
		if ms <= 0 {
			return "0ms"
		}
		return Dur(ms)
	}
	return fmt.Sprintf("queued %s for %s, ran %s", d(queuedMS), what, d(ranMS))
}
