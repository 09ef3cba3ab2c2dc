package temporal

import (
	"errors"

	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"
)

// chainAttempts bounds a chain step's attempts as its writer's calls are
// bounded: the submitter's attempts (temporal.attempts, the plan's), at
// least one, at most the MaxAttempts a worker runs. It was 5 whatever the
// settings said.
func chainAttempts(l CallLimits) int32 {
	return int32(min(max(l.Attempts, 1), MaxAttempts))
}

// chainTries keeps the attempts a writer's chain step took (0: unknown),
// for its call's record.
func (r *activityRunner) chainTries(task string, n int) {
	if n <= 0 {
		return
	}
	if r.in.ChainTries == nil {
		r.in.ChainTries = map[string]int{}
	}
	r.in.ChainTries[task] = n
}

// failedTries is how many attempts a chain step that failed took when
// Temporal says: all of its policy's once they ran out; 0 otherwise (a
// final refusal says nothing of which attempt it came at).
func failedTries(err error, ao workflow.ActivityOptions) int {
	var act *temporal.ActivityError
	if !errors.As(err, &act) || act.RetryState() != enumspb.RETRY_STATE_MAXIMUM_ATTEMPTS_REACHED || ao.RetryPolicy == nil {
		return 0
	}
	return int(ao.RetryPolicy.MaximumAttempts)
}
