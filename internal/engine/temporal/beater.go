package temporal

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"reflect"
	"sync"
	"time"

	"go.temporal.io/sdk/activity"

	"github.com/broodhq/brood/internal/call"
	"github.com/broodhq/brood/internal/codesnap"
	"github.com/broodhq/brood/internal/dispatch"
	"github.com/broodhq/brood/internal/session"
	"github.com/broodhq/brood/internal/taskdir"
)

// beater turns a child's signs of life into heartbeats, uploading its
// transcript as it grows (at most every UploadEvery), so the details a
// retry gets point at a transcript in the store and say how far it goes.
type beater struct {
	ctx  context.Context
	a    *Activities
	s    *sender
	id   string
	cp   *copyOf // the call's copy of the submitter's tree (nil: none)
	ro   int     // 0 unknown, 1 read-only, 2 a writer
	code *codesnap.Result
	kick chan struct{}
	done chan struct{}
	wg   sync.WaitGroup

	mu   sync.Mutex // one upload and heartbeat at a time (beats, turns, the end)
	pos  int64
	ref  Ref
	last time.Time
	hb   Heartbeat // the last one sent

	// first runs at the child's first sign of life (it ends the
	// attempt's own beats, before the first of the child's).
	first func()
	once  sync.Once
}

// newBeater starts from the continuation the attempt was given (from): until
// this attempt uploads a transcript (or takes a change) of its own, its
// heartbeats keep naming the earlier one, so a worker that dies before its
// first upload hands the next attempt the same continuation, never none.
func newBeater(ctx context.Context, a *Activities, s *sender, id string, cp *copyOf, from Heartbeat) *beater {
	b := &beater{ctx: ctx, a: a, s: s, id: id, cp: cp, kick: make(chan struct{}, 1), done: make(chan struct{})}
	if from.TaskID == id {
		b.ref, b.pos, b.code = from.Transcript, from.Position, from.Code
	}
	b.wg.Add(1)
	go b.loop()
	return b
}

// alive is called on every line the child prints (its pings included).
func (b *beater) alive() {
	if b.first != nil {
		b.once.Do(b.first)
	}
	select {
	case b.kick <- struct{}{}:
	default:
	}
}

// loop beats on the child's signs of life, at most every interval: a sign
// within it is beaten for at its end (as the SDK's throttle does).
func (b *beater) loop() {
	defer b.wg.Done()
	t := time.NewTimer(0)
	t.Stop()
	defer t.Stop()
	due := false // a beat waits for the interval's end
	for {
		select {
		case <-b.done:
			return
		case <-b.kick:
			if due {
				continue
			}
		case <-t.C:
		}
		wait := b.beat()
		if due = wait > 0; due {
			t.Reset(wait)
		}
	}
}

// finish uploads the transcript as the child left it and,
// for a call that ended (not one stopped under it), its result, and says
// so in a last heartbeat: a retry after this worker dies returns that
// result instead of running the call again. A call done with the answer
// whose turn's heartbeat the server has already (its whole transcript and
// change) needs none: a retry continues from that transcript, which ends
// with the answer, and ends with it without asking the model anything.
func (b *beater) finish(r *call.Result) {
	b.mu.Lock()
	defer b.mu.Unlock()
	var hb Heartbeat
	b.a.Times.timed("  final transcript upload", func() { hb = b.upload(true) })
	b.hb = hb
	held, has := b.s.details()
	if r == nil || r.Status == dispatch.StatusCancelled || r.Status == dispatch.StatusKilled {
		if !has || !reflect.DeepEqual(held, hb) {
			b.s.beat(hb, true)
		}
		return
	}
	if has && r.Status == dispatch.StatusDone && len(r.Failures) == 0 && b.changeHeld(r) && b.answerHeld(held, hb) {
		b.a.Times.Add("  result named by the answer's heartbeat", 0)
		return
	}
	if data, err := json.Marshal(r); err == nil {
		at := time.Now()
		if ref, err := b.a.Store.PutBytes(context.WithoutCancel(b.ctx), data); err == nil {
			b.a.Times.Add("  result put in the store", time.Since(at))
			hb.Result = ref
			// On the server before the activity completes: a completion
			// lost (a server restart, this worker killed now) is retried
			// with this heartbeat, and the retry returns the result.
			b.a.Times.timed("  result heartbeat recorded", func() {
				b.s.record(context.WithoutCancel(b.ctx), hb, b.a.durableFor(b.ctx))
			})
		}
	}
}

// turn is the child's turn boundary (call.Watch.Turn): its transcript so far
// goes to the store and the heartbeat naming it to the server before the
// child makes its next model request.
func (b *beater) turn(ctx context.Context, _ int) bool {
	at := time.Now()
	b.mu.Lock()
	hb := b.upload(true)
	b.hb = hb
	gone := b.s.record(ctx, hb, b.a.durableFor(ctx))
	b.mu.Unlock()
	b.a.Times.Add("child: turn made durable", time.Since(at))
	// gone: the server runs this call elsewhere now (this worker was
	// stopped past the heartbeat timeout) or cancelled it: the child is
	// not told to go on, so it asks the model nothing more; the SDK,
	// told so (sender.answered), cancels the attempt.
	return !gone
}

// readOnly reports whether the call's agent is read-only (its envelope,
// written by this worker before the child starts): it has no change to take.
func (b *beater) readOnly() bool {
	if b.ro == 0 {
		if t, err := dispatch.LoadTask(b.a.ProjectRoot, b.id); err == nil && t.Envelope != nil {
			b.ro = 2
			if t.Envelope.ReadOnly {
				b.ro = 1
			}
		}
	}
	return b.ro == 1
}

// stop ends the loop (before the copy's final change is taken).
func (b *beater) stop() {
	close(b.done)
	b.wg.Wait()
}

// beat sends a heartbeat when the interval has passed (else it returns
// how long until it has), the transcript uploaded first when it grew (at
// most every UploadEvery).
func (b *beater) beat() time.Duration {
	b.mu.Lock()
	defer b.mu.Unlock()
	if wait := b.s.wait(); wait > 0 {
		return wait
	}
	return b.s.beat(b.upload(false), false)
}

// answerHeld reports whether held, the details the server has, name the
// call's whole transcript as hb does: the same, or the same but for the
// run's end record, which the child writes after its final answer's turn
// boundary, while that turn is made durable (a continuation from held ends
// with that answer too, and records its own end).
func (b *beater) answerHeld(held, hb Heartbeat) bool {
	if held.TaskID != hb.TaskID || held.Worker != hb.Worker || !held.Result.IsZero() || !reflect.DeepEqual(held.Code, hb.Code) {
		return false
	}
	td, err := taskdir.Open(b.a.ProjectRoot).Task(b.id)
	if err != nil {
		return false
	}
	// hb names the child's whole transcript only if its uploads took: a
	// failed put leaves hb (and held) naming an earlier one.
	data, err := td.ReadFile(taskdir.Session, 0)
	if err != nil || int64(len(data)) != hb.Position {
		return false
	}
	if held.Transcript == hb.Transcript {
		return true
	}
	if held.Transcript.IsZero() || held.Position > hb.Position || held.Position != held.Transcript.Size {
		return false
	}
	if sum := sha256.Sum256(data[:held.Position]); hex.EncodeToString(sum[:]) != held.Transcript.SHA256 {
		return false
	}
	for line := range bytes.Lines(data[held.Position:]) {
		var rec struct{ Type session.RecordType }
		if json.Unmarshal(line, &rec) != nil || rec.Type != session.RecEnd {
			return false
		}
	}
	return true
}

// changeHeld reports whether r's change is the one the last heartbeat
// names (none for both: a read-only call, a writer that changed nothing).
func (b *beater) changeHeld(r *call.Result) bool {
	if b.code == nil {
		return len(r.Code) == 0
	}
	data, err := json.Marshal(b.code)
	return err == nil && string(data) == string(r.Code)
}

// upload puts the transcript in the store when it grew (at most every
// UploadEvery, unless final) and returns the heartbeat that names it.
func (b *beater) upload(final bool) Heartbeat {
	every := b.a.UploadEvery
	if every <= 0 {
		every = 2 * time.Second
	}
	if b.id != "" && (final || time.Since(b.last) >= every) {
		if td, err := taskdir.Open(b.a.ProjectRoot).Task(b.id); err == nil {
			// The transcript is the child's to write: read with no
			// link followed and nothing but a regular file accepted.
			if data, err := td.ReadFile(taskdir.Session, 0); err == nil && int64(len(data)) != b.pos {
				if ref, err := b.a.Store.PutBytes(context.WithoutCancel(b.ctx), data); err == nil {
					b.pos, b.ref, b.last = int64(len(data)), ref, time.Now()
					b.partial()
				}
			}
		}
	}
	return Heartbeat{TaskID: b.id, Worker: b.a.Worker, Transcript: b.ref, Position: b.pos, Code: b.code}
}

// partial takes a writer's change so far with its transcript, so a retry
// on another worker starts from the snapshot plus what it had written.
func (b *beater) partial() {
	if b.cp == nil || b.readOnly() {
		return
	}
	if res, err := b.cp.co.Result(context.WithoutCancel(b.ctx), b.a.Code.Blobs); err == nil {
		if res.Patch == nil {
			res = nil
		}
		b.code = res
	}
}

// keepBeating sends hb at a third of the heartbeat timeout until stopped
// (work before the child starts, which sends no pings of its own). The
// returned stop waits for the last beat and may be called more than once.
func keepBeating(ctx context.Context, s *sender, hb Heartbeat) func() {
	every := activity.GetInfo(ctx).HeartbeatTimeout / 3
	if every <= 0 {
		return func() {}
	}
	done := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		t := time.NewTicker(every)
		defer t.Stop()
		for {
			select {
			case <-done:
				return
			case <-t.C:
				s.beat(hb, true)
			}
		}
	}()
	var once sync.Once
	return func() { once.Do(func() { close(done); wg.Wait() }) }
}
