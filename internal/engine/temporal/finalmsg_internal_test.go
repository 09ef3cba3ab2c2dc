package temporal

import (
	"errors"
	"fmt"
	"testing"

	"go.temporal.io/sdk/temporal"
)

// TestFinalMessageIsOneLineOfItsOwn: a call that failed for good says its
// own error, not the SDK's wrapping, and never that it is tried again.
func TestFinalMessageIsOneLineOfItsOwn(t *testing.T) {
	retry := temporal.NewApplicationError("the signed submission of key K is not in the fleet store (sha256/x): check this worker's --store is the submitter's; the call is tried again", "brood.Retry")
	cases := []struct {
		name string
		err  error
		want string
	}{
		{"retryable, wrapped", fmt.Errorf("activity error (type: brood.agent, scheduledEventID: 5): %w", retry),
			"the signed submission of key K is not in the fleet store (sha256/x): check this worker's --store is the submitter's (its last attempt: the call is not tried again)"},
		{"not retryable", temporal.NewNonRetryableApplicationError("unknown agent type", "brood.Refused", nil), "unknown agent type"},
		{"no application error", errors.New("context deadline exceeded"), "context deadline exceeded"},
		{"terminated", workflowErr(fmt.Errorf("workflow execution error (type: brood.call): %w", &temporal.TerminatedError{})), "it was terminated on Temporal (temporal workflow terminate), so it has no result"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if got := finalMessage(tc.err); got != tc.want {
				t.Fatalf("finalMessage = %q\nwant %q", got, tc.want)
			}
		})
	}
}
