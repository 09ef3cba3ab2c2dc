package devserver

import (
	"context"
	"os"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"go.temporal.io/sdk/client"
	"golang.org/x/sys/unix"
)

// TestServerOutlivesTheThreadThatStartedIt: the kernel kills the server
// (Pdeathsig) when the thread that started it ends, and the Go runtime
// ends any thread whose goroutine exits locked to it, as a pool's
// throw-away start thread does: a server started on such a thread must
// not die with it (it did, once, in the middle of the temporal package's
// tests: every later test found no server).
func TestServerOutlivesTheThreadThatStartedIt(t *testing.T) {
	var s *Server
	tid := make(chan int, 1)
	done, release := make(chan struct{}), make(chan struct{})
	defer close(release)
	for started := false; !started; {
		onMain := make(chan bool, 1)
		go func() {
			runtime.LockOSThread() // this thread ends with the goroutine
			if unix.Gettid() == os.Getpid() {
				// The main thread is never ended (the runtime parks it):
				// hold it here, so the next goroutine runs on another.
				onMain <- true
				<-release
				return
			}
			onMain <- false
			defer close(done)
			tid <- unix.Gettid()
			s = StartShared(t)
		}()
		started = !<-onMain
	}
	<-done
	if s == nil {
		t.Fatal("the dev server did not start")
	}
	t.Cleanup(s.Kill)
	task := "/proc/self/task/" + strconv.Itoa(<-tid)
	for deadline := time.Now().Add(30 * time.Second); ; {
		if _, err := os.Stat(task); os.IsNotExist(err) {
			break // the thread has ended: a Pdeathsig has been sent by now
		}
		if time.Now().After(deadline) {
			t.Fatalf("the starting thread did not end: %s is still there", task)
		}
		time.Sleep(10 * time.Millisecond) // polling the kernel's record of a thread
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	c, err := client.DialContext(ctx, client.Options{HostPort: s.Addr, Logger: quiet{}})
	if err == nil {
		_, err = c.CheckHealth(ctx, &client.CheckHealthRequest{})
		c.Close()
	}
	if err != nil {
		t.Fatalf("the dev server died with the thread that started it: %v\n%s", err, s.Log())
	}
}

// TestServerRunsOnOneP: the dev server runs with GOMAXPROCS=1, as
// docs/scale-out.md has users start theirs, whatever GOMAXPROCS the test
// binary has; BROOD_TEMPORAL_GOMAXPROCS sets another (0: Go's default).
func TestServerRunsOnOneP(t *testing.T) {
	for _, c := range []struct {
		name, procs string
		env         []string
		want        []string
	}{
		{"default", "", []string{"A=1", "GOMAXPROCS=8"}, []string{"A=1", "GOMAXPROCS=1"}},
		{"none inherited", "", []string{"A=1"}, []string{"A=1", "GOMAXPROCS=1"}},
		{"a benchmark's", "2", []string{"GOMAXPROCS=8", "A=1"}, []string{"A=1", "GOMAXPROCS=2"}},
		{"go's default", "0", []string{"GOMAXPROCS=8", "A=1"}, []string{"A=1"}},
	} {
		if got := serverEnv(c.env, c.procs); !slices.Equal(got, c.want) {
			t.Errorf("%s: %q; want %q", c.name, got, c.want)
		}
	}
	t.Setenv("BROOD_TEMPORAL_GOMAXPROCS", "")
	t.Setenv("GOMAXPROCS", "2")
	s := Start(t)
	env, err := os.ReadFile("/proc/" + strconv.Itoa(s.Pid()) + "/environ")
	if err != nil {
		t.Fatal(err)
	}
	vars := strings.Split(string(env), "\x00")
	if !slices.Contains(vars, "GOMAXPROCS=1") || slices.Contains(vars, "GOMAXPROCS=2") {
		t.Fatalf("the dev server's GOMAXPROCS: %q; want 1 only", slices.DeleteFunc(vars, func(v string) bool { return !strings.HasPrefix(v, "GOMAXPROCS") }))
	}
}
