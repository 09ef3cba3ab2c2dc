package sandbox

import (
	"os"
	"os/exec"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// BenchmarkStartCost is what a child's namespaces cost to make and tear
// down, against a plain start: `true` started and waited for from a
// locked thread (as the pool does), with no namespace, a user namespace,
// and a user and a mount namespace (a read-only or in-place child's), from
// a process with a small heap and with 64 MiB of it touched (the root's
// heap is what a fork without vfork copies the page tables of: Go forks a
// child that gets a user namespace without CLONE_VM). Metrics per start:
// the parent's own CPU (RUSAGE_SELF: the fork, the id maps, the wait), the
// child's (RUSAGE_CHILDREN: its exec, its namespaces' set-up and
// teardown), both in ms.
//
//	go test ./internal/sandbox -run '^$' -bench StartCost -benchtime 200x
func BenchmarkStartCost(b *testing.B) {
	path, err := exec.LookPath("true")
	if err != nil {
		b.Fatal("no true program to start:", err)
	}
	if r := ProbeUserNS(b.Context()); !r.UserNS {
		b.Fatal("no user namespaces here:", r.Errors["user_namespaces"])
	}
	for _, heap := range []int{0, 64 << 20} {
		var ballast []byte
		if heap > 0 {
			ballast = make([]byte, heap)
			for i := range ballast {
				if i%4096 == 0 {
					ballast[i] = 1
				}
			}
		}
		for _, c := range []struct {
			name  string
			flags uintptr
		}{{"plain", 0}, {"user", syscall.CLONE_NEWUSER}, {"user+mount", syscall.CLONE_NEWUSER | syscall.CLONE_NEWNS}} {
			b.Run(c.name+"/heap="+strconv.Itoa(heap>>20)+"MiB", func(b *testing.B) {
				var self, kids time.Duration
				for b.Loop() {
					cmd := exec.Command(path)
					if c.flags != 0 {
						AddNamespaces(cmd, c.flags, nil)
					}
					s0, k0 := rusage(syscall.RUSAGE_SELF), rusage(syscall.RUSAGE_CHILDREN)
					errc := make(chan error, 1)
					go func() {
						runtime.LockOSThread()
						errc <- cmd.Run() // the thread is handed back: nothing was applied to it
						runtime.UnlockOSThread()
					}()
					if err := <-errc; err != nil {
						b.Fatal(err)
					}
					self += rusage(syscall.RUSAGE_SELF) - s0
					kids += rusage(syscall.RUSAGE_CHILDREN) - k0
				}
				b.ReportMetric(float64(self)/float64(b.N)/1e6, "self-cpu-ms/op")
				b.ReportMetric(float64(kids)/float64(b.N)/1e6, "child-cpu-ms/op")
			})
		}
		runtime.KeepAlive(ballast)
	}
	for _, c := range []struct {
		name string
		pol  Policy
	}{{"none", Policy{}}, {"read-only", Policy{ReadOnly: true, MountsReadOnly: true, Writable: []string{b.TempDir()}}}} {
		b.Run("confine/"+c.name, func(b *testing.B) {
			var self, kids time.Duration
			for b.Loop() {
				s0, k0 := rusage(syscall.RUSAGE_SELF), rusage(syscall.RUSAGE_CHILDREN)
				var stdout, stderr strings.Builder
				if err := runOnBase(b, c.pol, "exit", &stdout, &stderr, "GOMAXPROCS=1"); err != nil {
					b.Fatalf("child: %v: %s", err, stderr.String())
				}
				self += rusage(syscall.RUSAGE_SELF) - s0
				kids += rusage(syscall.RUSAGE_CHILDREN) - k0
			}
			b.ReportMetric(float64(self)/float64(b.N)/1e6, "self-cpu-ms/op")
			b.ReportMetric(float64(kids)/float64(b.N)/1e6, "child-cpu-ms/op")
		})
	}
}

func rusage(who int) time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(who, &ru); err != nil {
		panic(os.NewSyscallError("getrusage", err))
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
