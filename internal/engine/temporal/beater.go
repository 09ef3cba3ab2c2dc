package temporal

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
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
	info CallInfo // the call's, for the heartbeats' signatures
	kick chan struct{}
	done chan struct{}
	wg   sync.WaitGroup

	mu   sync.Mutex // one upload and heartbeat at a time (beats, turns, the end)
	pos  int64
	ref  Ref
	last time.Time
	hb   Heartbeat // the last one sent
	// ask is where a follow-up prompt (brood tasks resume ID "PROMPT")
	// goes in the transcript, while it is not in it yet (-1: none): until
	// it is, the heartbeats keep naming the earlier transcript, so a retry
	// still sends the follow-up (resumePoint) instead of continuing the
	// earlier run, whose answer would be returned for it.
	ask int64
	// answer is the call's answer key in the store ("": none), and named
	// the heartbeat of the final answer this attempt named there (zero:
	// none; finalTurn).
	answer string
	named  Heartbeat
	// byRecord: the call's result goes with its named answer, no result
	// heartbeat (finish): the server has heard nothing of it since its
	// start.
	byRecord bool

	// first runs at the child's first sign of life (it ends the
	// attempt's own beats, before the first of the child's).
	first func()
	once  sync.Once
}

// newBeater starts from the continuation the attempt was given (from): until
// this attempt uploads a transcript (or takes a change) of its own, its
// heartbeats keep naming the earlier one, so a worker that dies before its
// first upload hands the next attempt the same continuation, never none.
// ask is where the call's follow-up prompt goes in the transcript (-1: it
// has none to send; followUpAt).
func newBeater(ctx context.Context, a *Activities, s *sender, id string, cp *copyOf, from Heartbeat, ask int64, info CallInfo) *beater {
	b := &beater{ctx: ctx, a: a, s: s, id: id, cp: cp, ask: ask, info: info, kick: make(chan struct{}, 1), done: make(chan struct{})}
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
//
// An attempt the server knows no more uploads nothing: no one would read it.
func (b *beater) finish(r *call.Result) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.s.isGone() {
		b.hb = b.current()
		return
	}
	// Bounded: a store that hangs does not hold the attempt (and its slot).
	ctx, cancel := context.WithTimeout(context.WithoutCancel(b.ctx), b.a.storeFor(b.ctx))
	defer cancel()
	var hb Heartbeat
	b.a.Times.timed("  final transcript upload", func() { hb, _ = b.upload(ctx, true) })
	b.hb = hb
	held, has := b.s.details()
	if r == nil || r.Status == dispatch.StatusCancelled || r.Status == dispatch.StatusKilled {
		if !has || !reflect.DeepEqual(held, hb) {
			b.s.beat(hb, true)
		}
		return
	}
	if r.Status == dispatch.StatusDone && len(r.Failures) == 0 && b.changeHeld(r) {
		if has && b.answerHeld(held, hb) {
			b.a.Times.Add("  result named by the answer's heartbeat", 0)
			return
		}
		if b.named.TaskID != "" && b.answerHeld(b.named, hb) {
			b.a.Times.Add("  result named by the answer's record", 0)
			b.byRecord = true
			return
		}
	}
	if data, err := json.Marshal(r); err == nil {
		at := time.Now()
		if ref, err := b.put(ctx, data, hb); err == nil {
			b.a.Times.Add("  result put in the store", time.Since(at))
			hb.Result = ref
			b.a.Keys.sign(b.info, &hb)
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
// child makes its next model request. true: the child goes on.
//
// A failed upload is retried while the child waits (storeFor: a flaky
// store), and a heartbeat the server does not take is retried (durableFor:
// a server restarting); when either still fails, the attempt ends here
// (ErrNotDurable): the child is stopped before its next model request, and
// a retry continues from the last durable point, asking again at most the
// turn this boundary closed, not every turn the child would have gone on
// to. A stopping attempt (a cancel) has its point recorded and its child
// told nothing more; a gone one uploads nothing.
func (b *beater) turn(ctx context.Context, _ int) bool {
	at := time.Now()
	defer func() { b.a.Times.Add("child: turn made durable", time.Since(at)) }()
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.s.isGone() {
		return false
	}
	hb, ok := b.uploadTurn(ctx)
	if !ok {
		return false
	}
	return b.recordTurn(ctx, hb)
}

// finalTurn is the boundary of the answer the child says ends its run
// (call.Watch.Final): its transcript goes to the store as a turn's does,
// and is named there under the call's answer key (answername.go) instead
// of by a heartbeat; where that name cannot be created, or the store does
// not create it within answerFor, it goes by its heartbeat, as any turn
// (turn). The name is created without b.mu held: the attempt's liveness
// beats go on meanwhile (naming the answer's transcript, uploaded), so a
// store that hangs never holds them past the heartbeat timeout.
func (b *beater) finalTurn(ctx context.Context, _ int) bool {
	at := time.Now()
	defer func() { b.a.Times.Add("child: turn made durable", time.Since(at)) }()
	b.mu.Lock()
	if b.s.isGone() {
		b.mu.Unlock()
		return false
	}
	hb, ok := b.uploadTurn(ctx)
	b.mu.Unlock()
	if !ok {
		return false
	}
	if b.a.nameAnswer(ctx, b.answer, b.info, hb) {
		b.mu.Lock()
		b.named = hb
		b.mu.Unlock()
		return true
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.s.isGone() {
		return false
	}
	return b.recordTurn(ctx, hb)
}

// uploadTurn puts the transcript in the store for a turn boundary (b.mu
// held); false: it could not be, and the attempt ends here.
func (b *beater) uploadTurn(ctx context.Context) (Heartbeat, bool) {
	hb, err := b.uploadHeld(ctx)
	if err != nil {
		b.s.fail(ErrNotDurable, fmt.Sprintf("task %s: its transcript could not be put in the fleet store at a turn boundary (%v): the child was stopped before its next model request; check the store (store setting); a retry continues from the last durable turn", b.id, err))
		return hb, false
	}
	b.hb = hb
	return hb, true
}

// recordTurn records hb, a turn boundary's, on the server (b.mu held):
// true when the child goes on.
func (b *beater) recordTurn(ctx context.Context, hb Heartbeat) bool {
	switch b.s.record(ctx, hb, b.a.durableFor(ctx)) {
	case recorded:
		return true
	case timedOut:
		if ctx.Err() == nil {
			b.s.fail(ErrNotDurable, fmt.Sprintf("task %s: the Temporal server did not take the heartbeat of a turn boundary within %s: the child was stopped before its next model request; a retry continues from the last durable turn", b.id, b.a.durableFor(ctx)))
		}
	}
	// Stopping (a cancel: its point is recorded) or gone (the server runs
	// the call elsewhere now, or refuses this attempt): the child is not
	// told to go on, so it asks the model nothing more; it is stopped
	// (sender.answered).
	return false
}

// uploadHeld uploads the transcript for a turn boundary, retried with
// backoff while it fails, for at most storeFor in all, a put that hangs
// included (one try once ctx ended): the child waits, and the server hears
// liveness beats naming the last durable point meanwhile.
func (b *beater) uploadHeld(ctx context.Context) (Heartbeat, error) {
	// A turn boundary: the model was asked, so a follow-up is in the
	// transcript already.
	b.ask = -1
	bound, cancel := context.WithTimeout(context.WithoutCancel(b.ctx), b.a.storeFor(b.ctx))
	defer cancel()
	deadline, _ := bound.Deadline()
	wait := 100 * time.Millisecond
	for {
		hb, err := b.upload(bound, true)
		if err == nil || ctx.Err() != nil || b.s.isGone() || time.Now().Add(wait).After(deadline) {
			return hb, err
		}
		b.s.beat(b.current(), false)
		t := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			t.Stop()
		case <-t.C:
		}
		wait = min(2*wait, 2*time.Second)
	}
}

// readOnly reports whether the call's agent is read-only (by this worker's
// definitions, or by its envelope, written by this worker before the child
// starts): it has no change to take.
func (b *beater) readOnly() bool {
	if b.ro == 0 && b.cp != nil && b.cp.ro {
		b.ro = 1 // no envelope to read
	}
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
	ctx, cancel := context.WithTimeout(context.WithoutCancel(b.ctx), b.a.storeFor(b.ctx))
	defer cancel()
	hb, _ := b.upload(ctx, false) // a failed upload: the beat names the last one
	return b.s.beat(hb, false)
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
	if held.Transcript.IsZero() || held.Position > hb.Position || !isTranscript(held.Transcript, b.id, held.Code, data[:held.Position]) {
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
// UploadEvery, unless final), with a writer's change so far, and returns
// the heartbeat that names them; err: the transcript grew and could not be
// read or put (the heartbeat names the last one). A change that cannot be
// taken (the copy's own trouble: a file git cannot read) leaves the last
// one taken named with the new transcript, and the call's final change
// reports it. Nothing is put for an attempt the server knows no more, nor,
// while a follow-up is to be sent, before the transcript has it. ctx
// bounds the store's work.
func (b *beater) upload(ctx context.Context, final bool) (Heartbeat, error) {
	every := b.a.UploadEvery
	if every <= 0 {
		every = 2 * time.Second
	}
	if b.id == "" || !(final || time.Since(b.last) >= every) || b.s.isGone() {
		return b.current(), nil
	}
	td, err := taskdir.Open(b.a.ProjectRoot).Task(b.id)
	if err != nil {
		return b.current(), err
	}
	// The transcript is the child's to write: read with no link followed
	// and nothing but a regular file accepted.
	data, err := td.ReadFile(taskdir.Session, 0)
	if err != nil {
		return b.current(), err
	}
	if int64(len(data)) == b.pos || (b.ask >= 0 && !asked(data, b.ask)) {
		return b.current(), nil
	}
	// The change is taken after the transcript was read (never behind
	// it), and named in the transcript's first line: a retry applies
	// only the change uploaded with its task's transcript.
	code := b.code
	if c, err := b.change(ctx); err == nil {
		code = c
	}
	ref, err := b.put(ctx, TranscriptObjectWith(b.id, code, data), b.current())
	if err != nil {
		return b.current(), err
	}
	b.pos, b.ref, b.last, b.ask, b.code = int64(len(data)), ref, time.Now(), -1, code
	return b.current(), nil
}

// put puts data in the store within ctx. While it is on its way the
// server hears liveness beats naming hb (a slow store does not make the
// attempt look dead), and a put that outlasts ctx is left to finish or
// fail by itself: the attempt goes on without it.
func (b *beater) put(ctx context.Context, data []byte, hb Heartbeat) (Ref, error) {
	if !b.s.direct() {
		return b.a.Store.PutBytes(ctx, data)
	}
	type put struct {
		ref Ref
		err error
	}
	done := make(chan put, 1)
	go func() {
		ref, err := b.a.Store.PutBytes(ctx, data)
		done <- put{ref, err}
	}()
	for {
		t := time.NewTimer(max(b.s.wait(), 10*time.Millisecond))
		select {
		case p := <-done:
			t.Stop()
			return p.ref, p.err
		case <-ctx.Done():
			t.Stop()
			return Ref{}, fmt.Errorf("the store did not answer: %w", ctx.Err())
		case <-t.C:
			if b.s.beat(hb, false); b.s.isGone() {
				select { // nothing to beat for any more
				case p := <-done:
					return p.ref, p.err
				case <-ctx.Done():
					return Ref{}, fmt.Errorf("the store did not answer: %w", ctx.Err())
				}
			}
		}
	}
}

// current is the heartbeat naming what was uploaded last, signed by
// this worker for the call.
func (b *beater) current() Heartbeat {
	hb := Heartbeat{TaskID: b.id, Worker: b.a.Worker, Transcript: b.ref, Position: b.pos, Code: b.code}
	b.a.Keys.sign(b.info, &hb)
	return hb
}

// change is a writer's change so far, taken with its transcript, so a
// retry on another worker starts from the snapshot plus what it had
// written (b.code as it is: no copy, or a read-only agent).
func (b *beater) change(ctx context.Context) (*codesnap.Result, error) {
	if b.cp == nil || b.readOnly() {
		return b.code, nil
	}
	res, err := b.cp.co.Result(ctx, b.a.Code.Blobs)
	if err != nil {
		return nil, err
	}
	if res.Patch == nil {
		res = nil
	}
	return res, nil
}

// asked reports whether the transcript has a user message after at (a
// follow-up's turn: the resumed run's records start at at).
func asked(data []byte, at int64) bool {
	if at > int64(len(data)) {
		return false
	}
	for line := range bytes.Lines(data[at:]) {
		var rec struct {
			Type    session.RecordType
			Message *struct{ Role string }
		}
		if json.Unmarshal(line, &rec) == nil && rec.Type == session.RecMessage && rec.Message != nil && rec.Message.Role == "user" {
			return true
		}
	}
	return false
}

// followUpAt is where the call's follow-up prompt goes in the task's
// transcript (-1: it has none to send): the end of the transcript the
// attempt starts from (the store's seed, or the task's own here).
func followUpAt(root, id string, spec call.Spec, hb Heartbeat, followUp bool) int64 {
	switch {
	case !followUp:
		return -1
	case spec.Transcript != "":
		// The seed: the store's transcript without its first line.
		if fi, err := os.Stat(spec.Transcript); err == nil {
			return fi.Size()
		}
		return 0
	case spec.Resume == "":
		return 0
	}
	td, err := taskdir.Open(root).Task(id)
	if err != nil {
		return 0
	}
	data, err := td.ReadFile(taskdir.Session, 0)
	if err != nil {
		return 0
	}
	return int64(len(data))
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
