package temporal

import (
	"context"
	"errors"
	"strings"

	"go.temporal.io/api/serviceerror"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/broodhq/brood/internal/termsafe"
	"github.com/broodhq/brood/internal/textline"
	wf "github.com/broodhq/brood/internal/workflow"
)

// unreachablePhrase starts what a submitter says of a run or a call while
// the server does not answer (issue 26 F5): that, never a state it did not
// read (queued, no worker polling), while the calls may be mid-turn on
// live workers.
const unreachablePhrase = "unknown (cannot reach Temporal: "

// unreachableWord is the status of a run or a call whose server did not
// answer err (ok: err says the server cannot be reached, not that the
// submitter stopped asking: ctx ended).
func unreachableWord(ctx context.Context, err error) (word string, ok bool) {
	if err == nil || ctx.Err() != nil {
		return "", false
	}
	c := status.Code(err)
	if c == codes.Unknown {
		c = serviceerror.ToStatus(err).Code() // the SDK's own error types
	}
	if c != codes.Unavailable && c != codes.DeadlineExceeded && !errors.Is(err, context.DeadlineExceeded) {
		return "", false
	}
	// (The description is the far end's words: made safe for a terminal.)
	return unreachablePhrase + termsafe.Line(textline.Line(err.Error(), 200)) + "; the calls' state is unknown until it answers)", true
}

// unreachable: status says the server could not be asked.
func unreachable(status string) bool { return strings.HasPrefix(status, unreachablePhrase) }

// answersAgain passes on that a run whose server could not be asked (said
// as the run's own event) answers again: running, as its phases say.
func answersAgain(id string, seen map[string]wf.Event, events func(wf.Event)) {
	if old, ok := seen[""]; ok && unreachable(old.Status) {
		events(wf.Event{RunID: id, Status: wf.RunRunning})
	}
}
