package temporal

import (
	"context"
	"errors"
	"sync"
	"time"

	"go.temporal.io/api/serviceerror"
	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/temporal"

	"github.com/broodhq/brood/internal/call"
	"github.com/broodhq/brood/internal/dispatch"
)

// An attempt's heartbeats. Every one of them is sent by a direct,
// synchronous RPC with the activity's task token, one at a time and in
// order, by the attempt's sender: the server's details are always the last
// ones sent, and each heartbeat is one write on the server. The SDK's
// activity.RecordHeartbeat is not used while the server answers: it sends
// at once when its throttle is idle (a durable beat given to it too costs
// two writes) and otherwise keeps the details for the end of its interval,
// when it may send details older than a durable beat sent meanwhile.
//
// Two kinds: a liveness beat (the child's signs of life, the attempt's own
// before its child speaks) goes at most every interval and is tried once;
// a durable beat (a call's transcript at a turn boundary, a finished
// call's result: what a retry must find) goes at once and is retried until
// the server has it (a server restarting), the attempt is gone on the
// server, or the limit passes. Either resets the interval: the server
// heard from the attempt.
//
// The server's answers that end the attempt here are of two kinds. Asked
// to stop (a cancel, a pause, a reset): the server recorded the beat all
// the same and records every later one, so the attempt's durable points
// keep being recorded while it winds down; only its child is stopped.
// Gone (the attempt is not the server's running one: NotFound; or the
// server refuses its beats: InvalidArgument, a task token or namespace it
// cannot take, which no retry of the same request changes): nothing the
// attempt sends is recorded any more, so it sends and uploads nothing
// more. Either way the child is stopped (abort) and the SDK is handed the
// answer by one activity.RecordHeartbeat with the latest details, so it
// cancels the attempt's context as it does for its own beats (it does not
// for InvalidArgument: the attempt then ends with ErrHeartbeatRefused).
// Without a client or a task token (an embedded test environment) every
// beat is the SDK's, as throttled as it is.
type sender struct {
	ctx   context.Context // the attempt's
	c     client.Client
	token []byte
	every time.Duration
	abort context.CancelCauseFunc // stops the attempt's child (nil: nothing to stop)

	mu   sync.Mutex // one heartbeat on the wire at a time, in order
	last time.Time  // when the server last heard from the attempt
	held Heartbeat  // the details the server has, when known
	has  bool
	stop bool        // the server asked the attempt to stop; it still records its beats
	gone bool        // the server records nothing more of the attempt
	end  *attemptEnd // why the attempt ends here, retryably (nil: it does not)
}

// outcome is what became of a durable beat.
type outcome int

const (
	recorded outcome = iota // the server has it
	stopping                // the server has it, and asks the attempt to stop
	gone                    // the server does not have it, and never will
	timedOut                // the server did not take it within the limit
)

// attemptEnd is how an attempt ends when its worker ends it (a retry
// continues the call from its last durable point): typ is the error's type.
type attemptEnd struct{ typ, msg string }

// newSender is the attempt's sender. every is the worker's heartbeat
// interval (Activities.Heartbeat), at most 0.8 of the heartbeat timeout as
// the SDK's throttle is; the server's clock started at the attempt's start.
// abort stops the attempt's child.
func (a *Activities) newSender(ctx context.Context, abort context.CancelCauseFunc) *sender {
	info := activity.GetInfo(ctx)
	every := a.Heartbeat
	if hbt := info.HeartbeatTimeout * 4 / 5; hbt > 0 && (every <= 0 || every > hbt) {
		every = hbt
	}
	if every <= 0 {
		every = 30 * time.Second
	}
	last := time.Now()
	if st := info.StartedTime; !st.IsZero() && st.Before(last) {
		last = st
	}
	return &sender{ctx: ctx, c: a.Client, token: info.TaskToken, every: every, last: last, abort: abort}
}

func (s *sender) direct() bool { return s.c != nil && len(s.token) > 0 }

// beat sends hb as a liveness beat when the interval has passed since the
// server last heard from the attempt (or force), tried once; otherwise it
// returns how long until the interval has (the caller beats again then).
// It is sent after a cancel too (the attempt's context ended): the server
// records a stopping attempt's beats.
func (s *sender) beat(hb Heartbeat, force bool) (wait time.Duration) {
	if !s.direct() {
		activity.RecordHeartbeat(s.ctx, hb)
		return 0
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.gone {
		return 0
	}
	if wait := s.every - time.Since(s.last); wait > 0 && !force {
		return wait
	}
	ctx, cancel := context.WithTimeout(context.WithoutCancel(s.ctx), max(s.every, time.Second))
	defer cancel()
	err := s.c.RecordActivityHeartbeat(ctx, s.token, hb)
	s.answered(hb, err)
	return 0
}

// wait is how long until a liveness beat is due (0: now).
func (s *sender) wait() time.Duration {
	if !s.direct() {
		return 0
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	return max(s.every-time.Since(s.last), 0)
}

// record sends hb as a durable beat and returns once the server has it,
// or once it cannot: the limit passed (timedOut), or the attempt is not
// the server's running one any more (gone: cancelled and ended, timed
// out, completed, or its beats refused). It is sent when ctx has ended
// too (a cancel: the server records a stopping attempt's point), tried
// then for at most one heartbeat interval.
func (s *sender) record(ctx context.Context, hb Heartbeat, limit time.Duration) outcome {
	if !s.direct() {
		activity.RecordHeartbeat(s.ctx, hb)
		return recorded
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.gone {
		return gone
	}
	if ctx.Err() != nil {
		limit = min(limit, max(s.every, time.Second))
	}
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), limit)
	defer cancel()
	wait := 100 * time.Millisecond
	for {
		err := s.c.RecordActivityHeartbeat(ctx, s.token, hb)
		if o, final := s.answered(hb, err); final {
			return o
		}
		t := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			t.Stop()
			return timedOut
		case <-t.C:
		}
		wait = min(2*wait, 2*time.Second)
	}
}

// answered keeps what the server's answer to hb says (s.mu held); final
// is false for an error that may go away (the server unreachable).
func (s *sender) answered(hb Heartbeat, err error) (o outcome, final bool) {
	switch {
	case err == nil:
		s.last, s.held, s.has = time.Now(), hb, true
		return recorded, true
	case stopRequested(err):
		s.last, s.held, s.has = time.Now(), hb, true
		if !s.stop {
			s.stop = true
			s.stopChild(hb, err)
		}
		return stopping, true
	case goneFor(err):
		s.gone, s.has = true, false
		if beatRefused(err) {
			// The SDK does not cancel the attempt for it: its end is ours.
			s.end = &attemptEnd{ErrHeartbeatRefused, "the server refuses the attempt's heartbeats (" + err.Error() + "): its child was stopped; a later attempt continues the call from its last durable point"}
			activity.GetLogger(s.ctx).Warn("brood: the server refuses this attempt's heartbeats; stopping its child", "error", err)
		}
		s.stopChild(hb, err)
		return gone, true
	}
	return timedOut, false
}

// stopChild stops the attempt's child and hands the server's answer to
// the SDK, which cancels the attempt's context as for its own beats.
func (s *sender) stopChild(hb Heartbeat, err error) {
	if !beatRefused(err) {
		activity.RecordHeartbeat(s.ctx, hb)
	}
	if s.abort != nil {
		s.abort(err)
	}
}

// fail ends the attempt here (the first reason kept): its child is
// stopped, and the attempt fails retryably with typ unless the server's
// cancel ended it first.
func (s *sender) fail(typ, msg string) {
	s.mu.Lock()
	if s.end == nil {
		s.end = &attemptEnd{typ, msg}
	}
	s.mu.Unlock()
	if s.abort != nil {
		s.abort(errors.New(msg))
	}
}

// ended is why the attempt ends here, retryably (nil: it does not).
func (s *sender) ended() *attemptEnd {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.end
}

// endedHere is how the attempt fails when its sender stopped the child
// (a turn that could not be made durable, heartbeats the server refuses)
// and the server's cancel did not: retryably, a retry continuing the call
// from its last durable point. nil: it did not, or the child had ended
// with a result meanwhile (its final answer's sync point failed), which
// the completion carries. r, err: what the call's runner returned.
func (s *sender) endedHere(ctx context.Context, r *call.Result, err error) error {
	e := s.ended()
	if e == nil || ctx.Err() != nil || (err == nil && !stoppedChild(r)) {
		return nil
	}
	// The child's own record says its parent stopped it: the call's last
	// attempt says why, failed, not cancelled.
	var last *call.Result
	if r != nil {
		c := *r
		c.Status, c.Error = dispatch.StatusFailed, e.msg
		last = &c
	}
	return temporal.NewApplicationErrorWithOptions(e.msg, e.typ, temporal.ApplicationErrorOptions{Details: []any{last}})
}

// isGone reports whether the server records nothing more of the attempt:
// what it would upload for it is no one's.
func (s *sender) isGone() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.gone
}

// details are the attempt's details the server has (has false: not
// known).
func (s *sender) details() (held Heartbeat, has bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.held, s.has
}

// durableFor is how long a durable heartbeat is retried: two heartbeat
// timeouts, at least a minute (a dev server restarts in seconds; a
// cluster's frontend fails over in well under a minute).
func (a *Activities) durableFor(ctx context.Context) time.Duration {
	return max(2*activity.GetInfo(ctx).HeartbeatTimeout, time.Minute)
}

// storeFor is how long a turn's upload is retried while the store fails:
// two heartbeat timeouts (a minute without one). The attempt's liveness
// beats go on meanwhile, so the server does not take it for dead.
func (a *Activities) storeFor(ctx context.Context) time.Duration {
	if hbt := activity.GetInfo(ctx).HeartbeatTimeout; hbt > 0 {
		return 2 * hbt
	}
	return time.Minute
}

// stopRequested reports whether a heartbeat's answer asks the attempt to
// stop: the server recorded the beat (a cancel requested, a pause, a
// reset).
func stopRequested(err error) bool {
	var cancelled *temporal.CanceledError
	return errors.As(err, &cancelled) || errors.Is(err, activity.ErrActivityPaused) || errors.Is(err, activity.ErrActivityReset)
}

// goneFor reports whether a heartbeat's error says the server records
// nothing of the attempt, now or on any retry: it knows the attempt (or
// its namespace) no more, or refuses the request (beatRefused).
func goneFor(err error) bool {
	var nf *serviceerror.NotFound
	var nsNF *serviceerror.NamespaceNotFound
	var nsNA *serviceerror.NamespaceNotActive
	return errors.As(err, &nf) || errors.As(err, &nsNF) || errors.As(err, &nsNA) || beatRefused(err)
}

// beatRefused reports whether the server refuses a heartbeat's request as
// such (InvalidArgument: RecordActivityTaskHeartbeat answers it for a task
// token it cannot read or one from another namespace; the same token never
// does better). The SDK logs it and goes on: it does not cancel the
// attempt.
func beatRefused(err error) bool {
	var inv *serviceerror.InvalidArgument
	return errors.As(err, &inv)
}
