package delegate

import (
	"context"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/broodhq/brood/internal/protocol"
)

// replyOf reads one line the parent sent down; "" when none is pending.
func replyOf(t *testing.T, input chan []byte) string {
	t.Helper()
	select {
	case b := <-input:
		m, err := protocol.Unmarshal(b)
		if err != nil {
			t.Fatal(err)
		}
		r, ok := m.(protocol.TurnReply)
		if !ok {
			t.Fatalf("sent down %T; want a turn_reply", m)
		}
		return r.ID
	default:
		return ""
	}
}

// TestTurnBoundaryWaitsForTheCaller: the parent answers a child's turn
// boundary only once its caller has returned (a fleet worker made the
// transcript durable); one boundary at a time, so a hostile child that
// sends more meanwhile gets them answered at once and cannot queue work;
// a line with no usable id is not a request; with no caller every boundary
// is answered at once.
func TestTurnBoundaryWaitsForTheCaller(t *testing.T) {
	input := make(chan []byte, 8)
	entered, leave := make(chan int, 1), make(chan struct{})
	c := &childTurns{ctx: context.Background(), input: input, f: func(_ context.Context, n int) {
		entered <- n
		<-leave
	}}
	c.handle(protocol.Turn{ID: "turn-a", Turn: 2})
	if n := <-entered; n != 2 {
		t.Fatalf("the caller heard turn %d; want 2", n)
	}
	if id := replyOf(t, input); id != "" {
		t.Fatalf("answered %q before the caller returned", id)
	}
	c.handle(protocol.Turn{ID: "turn-b", Turn: 3})
	if id := replyOf(t, input); id != "turn-b" {
		t.Fatalf("a boundary while one is recorded: reply %q; want turn-b at once", id)
	}
	c.handle(protocol.Turn{ID: "", Turn: 4})
	c.handle(protocol.Turn{ID: strings.Repeat("x", protocol.MaxID+1)})
	if id := replyOf(t, input); id != "" {
		t.Fatalf("a line with no usable id was answered (%q)", id)
	}
	close(leave)
	select {
	case b := <-input:
		input <- b
	case <-time.After(time.Minute):
		t.Fatal("no answer once the caller returned")
	}
	if id := replyOf(t, input); id != "turn-a" {
		t.Fatalf("reply %q; want turn-a once the caller returned", id)
	}
	local := &childTurns{ctx: context.Background(), input: input}
	local.handle(protocol.Turn{ID: "turn-c", Turn: 2})
	if id := replyOf(t, input); id != "turn-c" {
		t.Fatalf("no caller: reply %q; want turn-c at once", id)
	}
}

// TestChildWaitsAtTheTurnBoundary: the child's end sends the boundary up
// and goes on only on the reply with its id, or when its parent is gone.
func TestChildWaitsAtTheTurnBoundary(t *testing.T) {
	upR, upW := io.Pipe()
	downR, downW := io.Pipe()
	l := &parentLink{out: &events{up: protocol.NewWriter(upW)}}
	gone := make(chan struct{})
	go l.read(downR, func() { close(gone) })
	returned := make(chan struct{})
	go func() {
		l.turn(context.Background(), 2)
		close(returned)
	}()
	var req protocol.Turn
	for m, err := range protocol.Read(upR) {
		if err != nil {
			t.Fatal(err)
		}
		if r, ok := m.(protocol.Turn); ok {
			req = r
			break
		}
	}
	if req.Turn != 2 || !strings.HasPrefix(req.ID, "turn-") {
		t.Fatalf("boundary sent up: %+v", req)
	}
	send := func(m protocol.Message) {
		b, _ := protocol.Marshal(m)
		if _, err := downW.Write(append(b, '\n')); err != nil {
			t.Fatal(err)
		}
	}
	send(protocol.TurnReply{ID: "turn-other"})
	// The pipe hands over the next line only once the reader is done with
	// this one: after this write, the wrong reply has been handled.
	send(protocol.HookReply{ID: "hook-none"})
	select {
	case <-returned:
		t.Fatal("the child went on on a reply to another boundary")
	default:
	}
	send(protocol.TurnReply{ID: req.ID})
	select {
	case <-returned:
	case <-time.After(time.Minute):
		t.Fatal("the child did not go on after its reply")
	}
	// A parent gone: the next boundary does not wait.
	go func() {
		for range protocol.Read(upR) {
		}
	}()
	downW.Close()
	<-gone
	done := make(chan struct{})
	go func() { l.turn(context.Background(), 3); close(done) }()
	select {
	case <-done:
	case <-time.After(time.Minute):
		t.Fatal("the child waited for a parent that is gone")
	}
}
