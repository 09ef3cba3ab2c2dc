package devserver

import (
	"context"
	"os"
	"runtime"
	"strconv"
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
