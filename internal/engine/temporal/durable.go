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
// The server's answer that the attempt is cancelled or gone is handed to
// the SDK by one activity.RecordHeartbeat with the latest details: it
// hears the same answer and cancels the attempt's context, as it does for
// its own beats. Without a client or a task token (an embedded test
// environment) every beat is the SDK's, as throttled as it is.
type sender struct {
	ctx   context.Context // the attempt's
	c     client.Client
	token []byte
	every time.Duration

	mu   sync.Mutex // one heartbeat on the wire at a time, in order
	last time.Time  // when the server last heard from the attempt
	held Heartbeat  // the details the server has, when known
	has  bool
	gone bool // the attempt is cancelled or gone on the server
}

// newSender is the attempt's sender. every is the worker's heartbeat
// interval (Activities.Heartbeat), at most 0.8 of the heartbeat timeout as
// the SDK's throttle is; the server's clock started at the attempt's start.
func (a *Activities) newSender(ctx context.Context) *sender {
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
	return &sender{ctx: ctx, c: a.Client, token: info.TaskToken, every: every, last: last}
}

func (s *sender) direct() bool { return s.c != nil && len(s.token) > 0 }

// beat sends hb as a liveness beat when the interval has passed since the
// server last heard from the attempt (or force), tried once; otherwise it
// returns how long until the interval has (the caller beats again then).
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
	ctx, cancel := context.WithTimeout(s.ctx, max(s.every, time.Second))
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
// or once it cannot (ctx ended, the limit passed, the attempt is not the
// server's running one any more: cancelled, timed out, completed). gone
// reports the last: this attempt's work is no one's now.
func (s *sender) record(ctx context.Context, hb Heartbeat, limit time.Duration) (gone bool) {
	if !s.direct() {
		activity.RecordHeartbeat(s.ctx, hb)
		return false
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.gone {
		return true
	}
	ctx, cancel := context.WithTimeout(ctx, limit)
	defer cancel()
	wait := 100 * time.Millisecond
	for {
		err := s.c.RecordActivityHeartbeat(ctx, s.token, hb)
		if err == nil || permanent(err) {
			s.answered(hb, err)
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

// answered keeps what the server's answer to hb says (s.mu held).
func (s *sender) answered(hb Heartbeat, err error) {
	switch {
	case err == nil:
		s.last, s.held, s.has = time.Now(), hb, true
	case permanent(err):
		// The SDK learns it the way it learns it from its own beats.
		s.gone, s.has = true, false
		activity.RecordHeartbeat(s.ctx, hb)
	}
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
