package pool

import (
	"fmt"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// BenchmarkSpawnFork is what the parent pays for a child's fork (issue 29,
// docs/performance.md "The fork"), three ways, with /bin/true as the
// child so the fork is all there is:
//
//   - exec/userns: today's start: os/exec from a throw-away locked thread,
//     a user and a mount namespace (a read-only child's), so Go forks
//     without vfork, copies this process's page tables and writes the id
//     maps while the child waits;
//   - exec/unshare: the same namespaces made by the child after the fork
//     (Unshareflags), its own id maps written by itself: Go forks it
//     without vfork too, but need not (built with -overlay of a
//     syscall/exec_linux.go that vforks there, it does);
//   - exec/vfork: the same start without the namespaces (Go's vfork), the
//     floor of any in-process start;
//   - helper/userns: a fork server (forkserver_linux_test.go) starts it in
//     the same namespaces, a child of this process (CLONE_PARENT), and
//     hands back its pidfd;
//   - helper/vfork: the same without the namespaces (the helper vforks):
//     what the round trip and the helper's thread cost beside its fork.
//
// The parent holds a 24 MiB heap (the root's resident size) that it leaves
// alone ("idle") or writes a byte of every page of after each start
// ("written": every page the fork write-protected takes a fault, the most
// a root can pay). K starts run at once. Per start: the parent's CPU and
// minor faults, the helper's, the child's (RUSAGE_CHILDREN: a fork without
// vfork also costs the child, which tears the copied address space down at
// its exec), and tree-cpu, the three together (what a subagent's marginal
// CPU counts).
//
//	go test ./internal/pool -run '^$' -bench SpawnFork -benchtime 200x
func BenchmarkSpawnFork(b *testing.B) {
	ballast := make([]byte, 24<<20)
	touch := func() {
		for i := 0; i < len(ballast); i += 4096 {
			ballast[i]++
		}
	}
	touch()
	s := startSpawner(b)
	for _, heap := range []string{"idle", "written"} {
		after := func() {}
		if heap == "written" {
			after = touch
		}
		for _, mode := range []string{"exec/userns", "exec/unshare", "exec/vfork", "helper/userns", "helper/vfork"} {
			ns := strings.HasSuffix(mode, "/userns")
			start := func() error { return startExecWith(ns, mode == "exec/unshare", after) }
			if strings.HasPrefix(mode, "helper/") {
				start = func() error {
					code, status, err := startHelped(s, ns, 0, after)
					if err == nil && (code != cldExited || status != 0) {
						err = fmt.Errorf("child ended with code %d status %d", code, status)
					}
					return err
				}
			}
			for _, k := range []int{1, 16} {
				b.Run(fmt.Sprintf("%s/heap=%s/K=%d", mode, heap, k), func(b *testing.B) {
					benchStarts(b, s, k, start)
				})
			}
		}
	}
	runtime.KeepAlive(ballast)
}

// benchStarts runs start k at a time, b.N times, and reports what each
// start cost the parent, the helper and the child.
func benchStarts(b *testing.B, s *spawner, k int, start func() error) {
	h0 := helperUsage(b, s)
	self0, kids0 := usage(unix.RUSAGE_SELF), usage(unix.RUSAGE_CHILDREN)
	t0 := time.Now()
	for b.Loop() {
		var wg sync.WaitGroup
		errs := make(chan error, k)
		for range k {
			wg.Go(func() { errs <- start() })
		}
		wg.Wait()
		close(errs)
		for err := range errs {
			if err != nil {
				b.Fatal(err)
			}
		}
	}
	wall := time.Since(t0)
	self, kids, h := usage(unix.RUSAGE_SELF), usage(unix.RUSAGE_CHILDREN), helperUsage(b, s)
	n := float64(b.N * k)
	ms := func(d time.Duration) float64 { return float64(d) / n / 1e6 }
	b.ReportMetric(ms(self.cpu-self0.cpu), "parent-cpu-ms/start")
	b.ReportMetric(float64(self.minflt-self0.minflt)/n, "parent-minflt/start")
	b.ReportMetric(ms(h.cpu-h0.cpu), "helper-cpu-ms/start")
	b.ReportMetric(float64(h.minflt-h0.minflt)/n, "helper-minflt/start")
	b.ReportMetric(ms(kids.cpu-kids0.cpu), "child-cpu-ms/start")
	b.ReportMetric(ms(self.cpu-self0.cpu+h.cpu-h0.cpu+kids.cpu-kids0.cpu), "tree-cpu-ms/start")
	b.ReportMetric(ms(wall), "wall-ms/start")
}

type cpuFaults struct {
	cpu    time.Duration
	minflt int64
}

func usage(who int) cpuFaults {
	var ru unix.Rusage
	if err := unix.Getrusage(who, &ru); err != nil {
		panic(err)
	}
	return cpuFaults{time.Duration(ru.Utime.Nano() + ru.Stime.Nano()), ru.Minflt}
}

// helperUsage asks the helper for its own CPU and faults so far.
func helperUsage(b *testing.B, s *spawner) cpuFaults {
	r, err := s.call(spawnReq{op: 'r'}, nil)
	if err != nil {
		b.Fatal(err)
	}
	return cpuFaults{time.Duration(r.cpuNS), r.minflt}
}
