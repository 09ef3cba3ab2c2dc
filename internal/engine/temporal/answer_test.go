package temporal_test

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/broodhq/brood/internal/call"
	"github.com/broodhq/brood/internal/dispatch"
	"github.com/broodhq/brood/internal/model/modeltest"
)

// The two moments a call's model answer used to be lost in: after it
// arrived, while its tools ran; and after the final answer, before the
// call's result was recorded. A model answer is made durable (its
// transcript in the store, named by a heartbeat the server has) before
// anything acts on it, so a retry on another worker acts on it (runs its
// read-only tools again in its own copy, gives the others an "interrupted"
// result, or ends with the final answer) and never asks that turn again:
// the loopback model's request count is the oracle.

// TestKilledWorkerInAnsweredToolsNeverAsksItAgain: the first answer is a
// Bash call that blocks reading a fifo; the worker is killed while it
// blocks (the test knows it is there: its own open of the fifo to write
// returned). The retry does not run the Bash command again (it may have
// done what it does: a `git push`): it gives the model an "interrupted"
// result — were it run again, it would block on the fifo, which nobody
// opens again, and the call would not end — and asks turn 1 next: turn 0
// was asked once.
func TestKilledWorkerInAnsweredToolsNeverAsksItAgain(t *testing.T) {
	srv := sharedServer(t)
	c := srv.Client(t)
	q := newQueue(t)
	store := "file://" + t.TempDir()
	m := newTurnModel(t, 2)
	fifo := newFifo(t)
	const desc = "killed in its tools"
	m.answerWith(turnKey{desc, 0}, modeltest.ToolCall{ID: "toolu_0", Name: "Bash", Input: `{"command":"read line < ` + fifo + `; echo read $line"}`})
	// The child's Bash opens the fifo, in a host temp dir no child reads
	// but what it keeps: the directories on its PATH among them.
	env := append(m.env(), "PATH="+filepath.Dir(fifo)+string(os.PathListSeparator)+os.Getenv("PATH"))
	workers := []*workerProc{
		startWorkerProcEnv(t, srv.Addr, q, "agents: {}\n", store, 1, "", env...),
		startWorkerProcEnv(t, srv.Addr, q, "agents: {}\n", store, 1, "", env...),
	}
	eng := newEngine(c, q)
	id := dispatch.NewID()
	done := make(chan callOut, 1)
	go func() {
		r, err := eng.Call(context.Background(), call.Spec{TaskID: id, Agent: "explore", Prompt: "count the files", Description: desc})
		done <- callOut{r, err}
	}()
	w := openToWrite(t, fifo, done)
	victim, other := workers[0], workers[1]
	if other.taskDirs()[id] {
		victim, other = other, victim
	}
	victim.kill()
	// The killed worker's child and its tool die with it: looked at with
	// the fifo still open, whose EOF would end the tool by itself.
	waitFor(t, "the killed worker's tool to end", 2*time.Minute, func() bool { return !procNames(fifo) })
	w.Close()
	var o callOut
	select {
	case o = <-done:
	case <-time.After(3 * time.Minute):
		t.Fatal("the call did not finish after its worker was killed")
	}
	if o.err != nil {
		t.Fatal(o.err)
	}
	if o.r.Status != dispatch.StatusDone || !strings.Contains(o.r.Summary, "finished after 2 tool turns") || !other.taskDirs()[id] {
		t.Fatalf("result %+v; want task %s done on the other worker", o.r, id)
	}
	m.checkAskedOnce(t, desc, -1)
	if want := 3 * turnUsage.Input; o.r.Usage.Input != want || o.r.Attempts != 2 {
		t.Errorf("usage %+v, %d attempts; want the three turns' (%d in), 2 attempts", o.r.Usage, o.r.Attempts, want)
	}
}

// TestKilledWorkerBeforeItsResultNeverAsksTheLastTurnAgain: the worker is
// killed after its call's child ended with the final answer and before the
// result was recorded (BROOD_TEST_HOLD_BEFORE_RESULT stops it there until
// the test, which opened the fifo, has killed it). The retry on another
// worker ends with that answer: no turn was asked twice.
func TestKilledWorkerBeforeItsResultNeverAsksTheLastTurnAgain(t *testing.T) {
	srv := sharedServer(t)
	c := srv.Client(t)
	q := newQueue(t)
	store := "file://" + t.TempDir()
	m := newTurnModel(t, 2)
	fifo := newFifo(t)
	victim := startWorkerProcEnv(t, srv.Addr, q, "agents: {}\n", store, 1, "", append(m.env(), "BROOD_TEST_HOLD_BEFORE_RESULT="+fifo)...)
	eng := newEngine(c, q)
	const desc = "killed before its result"
	id := dispatch.NewID()
	done := make(chan callOut, 1)
	go func() {
		r, err := eng.Call(context.Background(), call.Spec{TaskID: id, Agent: "explore", Prompt: "count the files", Description: desc})
		done <- callOut{r, err}
	}()
	w := openToWrite(t, fifo, done)
	other := startWorkerProcEnv(t, srv.Addr, q, "agents: {}\n", store, 1, "", m.env()...)
	victim.kill()
	w.Close()
	var o callOut
	select {
	case o = <-done:
	case <-time.After(3 * time.Minute):
		t.Fatal("the call did not finish after its worker was killed")
	}
	if o.err != nil {
		t.Fatal(o.err)
	}
	if o.r.Status != dispatch.StatusDone || !strings.Contains(o.r.Summary, "finished after 2 tool turns") || !other.taskDirs()[id] {
		t.Fatalf("result %+v; want task %s done on the other worker", o.r, id)
	}
	m.checkAskedOnce(t, desc, -1)
	if want := 3 * turnUsage.Input; o.r.Usage.Input != want || o.r.Attempts != 2 {
		t.Errorf("usage %+v, %d attempts; want the three turns' (%d in), 2 attempts", o.r.Usage, o.r.Attempts, want)
	}
}

// newFifo is a named pipe any process of this user can open.
func newFifo(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	if err := os.Chmod(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(dir, "moment.fifo")
	if err := syscall.Mkfifo(p, 0o666); err != nil {
		t.Fatal(err)
	}
	return p
}

// openToWrite opens fifo to write: it returns once something opened it
// to read (the moment the test waits for), and fails the test if the call
// ends first.
func openToWrite(t *testing.T, fifo string, done chan callOut) *os.File {
	t.Helper()
	got := make(chan *os.File, 1)
	go func() {
		f, err := os.OpenFile(fifo, os.O_WRONLY, 0)
		if err != nil {
			f = nil
		}
		got <- f
	}()
	select {
	case f := <-got:
		if f == nil {
			t.Fatal("cannot open the fifo")
		}
		return f
	case o := <-done:
		t.Fatalf("the call ended before the moment: %+v, %v", o.r, o.err)
	case <-time.After(2 * time.Minute):
		t.Fatal("the call never reached the moment")
	}
	return nil
}

// procNames reports whether a running process names s on its command line.
func procNames(s string) bool {
	ents, _ := os.ReadDir("/proc")
	for _, e := range ents {
		if b, err := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline")); err == nil && bytes.Contains(b, []byte(s)) {
			return true
		}
	}
	return false
}
