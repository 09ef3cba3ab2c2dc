package temporal

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/temporal"
)

// ErrUntrusted: a worker refused a submission signed by a key it does not
// trust. Unlike a refusal (ErrRefused) it is tried again within the
// activity's attempts: another worker of the queue may trust the key (a
// queue whose workers' allowlists differ, a key being rotated), and that
// one takes the call or the chain step (issue 26, a tester's P1-1). When
// the attempts run out the last one's error names the key and every worker
// that refused it.
const ErrUntrusted = "brood.Untrusted"

// untrusted is verify's refusal of a key this worker does not trust (a
// bad signature, an expired or foreign submission is another error, and
// final).
type untrusted struct{ key []byte }

func (u untrusted) Error() string {
	return fmt.Sprintf("the submission is signed by key %s, which this worker does not trust: add its public key (brood worker --trusted-key, or ~/.config/brood/fleet/%s) if you trust who holds it", Fingerprint(u.key), TrustedKeysFile)
}

// isRefusal reports whether an activity's error is a worker's refusal of
// the submission: final (ErrRefused) or one whose attempts ran out
// (ErrUntrusted).
func isRefusal(app *temporal.ApplicationError) bool {
	return app != nil && (app.Type() == ErrRefused || app.Type() == ErrUntrusted)
}

// Bounds on the workers an untrusted refusal names: the list travels in
// the activity's heartbeat details, which any worker of the queue writes.
const (
	maxRefusers   = 8
	maxWorkerName = 80
)

// refuse is how an activity fails on its admission's error: an untrusted
// key is tried again (the workers that refused it so far kept in the
// attempt's heartbeat details, so the last attempt names them all), any
// other refusal is final (admitError). A scheduler that is no brood run
// gets no more than MaxAttempts of them.
func (a *Activities) refuse(ctx context.Context, err error) error {
	var u untrusted
	if !errors.As(err, &u) {
		return admitError(err)
	}
	return a.tryElsewhere(ctx, func(by string) string {
		return fmt.Sprintf("the submission is signed by key %s, which the workers that took it (%s) do not trust: a queue's workers share one allowlist; add its public key to theirs (brood worker --trusted-key, or ~/.config/brood/fleet/%s) if you trust who holds it; the call is tried again",
			Fingerprint(u.key), by, TrustedKeysFile)
	})
}

// tryElsewhere fails this attempt so that another worker of the queue,
// one that trusts what this one does not, may take the call: ErrUntrusted,
// tried again within the activity's attempts (final from MaxAttempts on).
// The workers that refused so far are kept in the attempt's heartbeat
// details (outside what a worker signs), so the last attempt names them
// all; say is the error's text given their list.
func (a *Activities) tryElsewhere(ctx context.Context, say func(by string) string) error {
	info := activity.GetInfo(ctx)
	var hb Heartbeat
	if activity.HasHeartbeatDetails(ctx) {
		_ = activity.GetHeartbeatDetails(ctx, &hb)
	}
	hb.RefusedBy = refusers(hb.RefusedBy, a.Worker)
	msg := say(strings.Join(hb.RefusedBy, ", "))
	if int(info.Attempt) >= MaxAttempts {
		return temporal.NewNonRetryableApplicationError(msg, ErrUntrusted, nil)
	}
	if a.Client != nil && len(info.TaskToken) > 0 {
		rctx, cancel := context.WithTimeout(ctx, 10*time.Second)
		defer cancel()
		_ = a.Client.RecordActivityHeartbeat(rctx, info.TaskToken, hb) // the list is what the error says, no more
	} else {
		activity.RecordHeartbeat(ctx, hb)
	}
	return temporal.NewApplicationError(msg, ErrUntrusted)
}

// refuseFrom is how a call fails on resumePoint's error: a From signed
// by a worker key this worker does not trust (fromElsewhere) is tried
// again, as another worker of the queue may trust it; any other is final.
func (a *Activities) refuseFrom(ctx context.Context, err error) error {
	var e *fromElsewhere
	if !errors.As(err, &e) {
		return temporal.NewNonRetryableApplicationError(err.Error(), ErrRefused, nil)
	}
	return a.tryElsewhere(ctx, func(by string) string {
		return fmt.Sprintf("%v (refused by %s); the call is tried again", err, by)
	})
}

// refusers is the list of workers that refused a key, with this one: each
// once, in the order they refused, names cut to printable text.
func refusers(before []string, self string) []string {
	var out []string
	for _, w := range append(before, self) {
		w = strings.Map(func(r rune) rune {
			if r < ' ' || r == 0x7f {
				return -1
			}
			return r
		}, w)
		if len(w) > maxWorkerName {
			w = strings.ToValidUTF8(w[:maxWorkerName], "")
		}
		if w == "" || slices.Contains(out, w) {
			continue
		}
		out = append(out, w)
	}
	if len(out) > maxRefusers {
		out = append(out[:maxRefusers-1], out[len(out)-1])
	}
	return out
}
