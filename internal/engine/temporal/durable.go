package temporal

import (
	"context"
	"errors"
	"time"

	"go.temporal.io/api/serviceerror"
	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/temporal"
)

// Durable heartbeats. The SDK's activity.RecordHeartbeat is throttled: it
// sends at most one heartbeat per interval and keeps the latest details
// for the end of it, so details given to it may never reach the server if
// the worker dies first. What a retry must find — a call's transcript at a
// turn boundary, a finished call's result — is recorded here by a direct,
// synchronous RPC with the activity's task token, retried until the server
// has it (a server restarting), the attempt is gone on the server, or the
// limit passes. The same details are given to the SDK first, so its own
// later beats carry them too and never older ones.

// durableFor is how long a durable heartbeat is retried: two heartbeat
// timeouts, at least a minute (a dev server restarts in seconds; a
// cluster's frontend fails over in well under a minute).
func (a *Activities) durableFor(ctx context.Context) time.Duration {
	return max(2*activity.GetInfo(ctx).HeartbeatTimeout, time.Minute)
}

// record sends hb to the server and returns once the server has it, or
// once it cannot (ctx ended, the limit passed, the attempt is not the
// server's running one any more: cancelled, timed out, completed). gone
// reports the last: this attempt's work is no one's now.
func (b *beater) record(ctx context.Context, hb Heartbeat, limit time.Duration) (gone bool) {
	activity.RecordHeartbeat(b.ctx, hb)
	c := b.a.Client
	token := activity.GetInfo(b.ctx).TaskToken
	if c == nil || len(token) == 0 {
		return false
	}
	ctx, cancel := context.WithTimeout(ctx, limit)
	defer cancel()
	wait := 100 * time.Millisecond
	for {
		err := c.RecordActivityHeartbeat(ctx, token, hb)
		if err == nil || permanent(err) {
			return err != nil
		}
		t := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			t.Stop()
			return false
		case <-t.C:
		}
		wait = min(2*wait, 2*time.Second)
	}
}

// permanent reports whether a heartbeat's error will not go away by
// trying again: the attempt was cancelled, or the server knows it no more.
func permanent(err error) bool {
	var cancelled *temporal.CanceledError
	var nf *serviceerror.NotFound
	var nsNF *serviceerror.NamespaceNotFound
	var inv *serviceerror.InvalidArgument
	return errors.As(err, &cancelled) || errors.As(err, &nf) || errors.As(err, &nsNF) || errors.As(err, &inv) ||
		errors.Is(err, activity.ErrActivityPaused) || errors.Is(err, activity.ErrActivityReset)
}
