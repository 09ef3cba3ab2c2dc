package workflow

import (
	"fmt"

	"github.com/broodhq/brood/internal/cli/cmdutil"
	wf "github.com/broodhq/brood/internal/workflow"
)

// callTimes is a call's line of times in brood workflow show: how long
// it waited for a worker (a pool slot on the local engine) and ran, and
// the attempts its change took to go into a fleet run's tree ("" when
// the record says none of it).
func callTimes(engine string, c wf.CallRecord) string {
	s := ""
	if c.QueuedMS > 0 || c.RanMS > 0 {
		what := "a pool slot"
		if engine == "temporal" {
			what = "a worker"
		}
		s = cmdutil.Times(c.QueuedMS, c.RanMS, what)
	}
	if c.ChainAttempts > 0 {
		if s != "" {
			s += "; "
		}
		s += fmt.Sprintf("its change took %d attempt(s) to go into the run's tree", c.ChainAttempts)
	}
	return s
}
