package spawn

import (
	"context"
	"strings"
	"sync/atomic"
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
	c := &childTurns{ctx: context.Background(), input: input, f: func(_ context.Context, n int) bool {
		entered <- n
		<-leave
		return true
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

// TestTurnBoundaryWaitAndGone: wait returns only once the caller has
// returned (a final answer's boundary, which the child does not wait for,
// is recorded before the call's result is returned), and a caller that
// says the call is gone gets the child no go-ahead.
func TestTurnBoundaryWaitAndGone(t *testing.T) {
	for _, goOn := range []bool{true, false} {
		input := make(chan []byte, 8)
		leave := make(chan struct{})
		var returned atomic.Bool
		c := &childTurns{ctx: context.Background(), input: input, f: func(context.Context, int) bool {
			<-leave
			returned.Store(true)
			return goOn
		}}
		c.handle(protocol.Turn{ID: "turn-a", Turn: 1})
		waited := make(chan struct{})
		go func() { c.wait(); close(waited) }()
		select {
		case <-waited:
			t.Fatalf("go on %v: wait returned before the caller did", goOn)
		default:
		}
		close(leave)
		<-waited
		if !returned.Load() {
			t.Fatalf("go on %v: wait returned before the caller did", goOn)
		}
		want := ""
		if goOn {
			want = "turn-a"
		}
		if id := replyOf(t, input); id != want {
			t.Errorf("go on %v: reply %q, want %q", goOn, id, want)
		}
	}
}

// TestFinalBoundaryGoesToItsCaller: a boundary the child says ends its
// run goes to the caller's Final (call.Watch.Final: a fleet worker names
// that answer in its store) when it has one, else to its Turn as any
// other; a boundary that does not say so always goes to Turn.
func TestFinalBoundaryGoesToItsCaller(t *testing.T) {
	for _, tc := range []struct {
		name      string
		final     bool // the child's word
		withFinal bool // the caller has a Final
		want      string
	}{
		{"final, to Final", true, true, "final"},
		{"final, no Final: to Turn", true, false, "turn"},
		{"not final: to Turn", false, true, "turn"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			input := make(chan []byte, 8)
			heard := make(chan string, 2)
			c := &childTurns{ctx: context.Background(), input: input,
				f: func(context.Context, int) bool { heard <- "turn"; return true }}
			if tc.withFinal {
				c.final = func(context.Context, int) bool { heard <- "final"; return true }
			}
			c.handle(protocol.Turn{ID: "turn-a", Turn: 1, Final: tc.final})
			c.wait()
			if got := <-heard; got != tc.want {
				t.Fatalf("heard by %s; want %s", got, tc.want)
			}
			if id := replyOf(t, input); id != "turn-a" {
				t.Fatalf("reply %q; want turn-a", id)
			}
		})
	}
}
