package pool

import (
	"context"
	"fmt"
	"testing"
)

// BenchmarkScheduler queues K read-only jobs behind a pool of five slots
// (a fan-out of K Task calls at the default concurrency) and hands every
// slot on as soon as it is granted; it reports the scheduler's cost per
// job and, for K=64 and K=256, that cost as a ratio to K=16's: a
// scheduler that scans every waiter on each release reads K/16 there,
// a linear one about 1.
//
//	go test ./internal/pool -run '^$' -bench Scheduler
func BenchmarkScheduler(b *testing.B) {
	var base float64
	for _, k := range []int{16, 64, 256} {
		b.Run(fmt.Sprintf("K=%d", k), func(b *testing.B) {
			ctx := context.Background()
			for b.Loop() {
				s := newScheduler(5)
				// Every slot taken first, so the K wait in the queue.
				var held []func()
				for range 5 {
					r, err := s.acquire(ctx, 0, ReadOnly)
					if err != nil {
						b.Fatal(err)
					}
					held = append(held, r)
				}
				done := make(chan struct{}, k)
				for range k {
					w := &waiter{prio: 0, class: ReadOnly, ready: make(chan struct{})}
					s.mu.Lock()
					s.seq++
					w.seq = s.seq
					s.waiting = append(s.waiting, w)
					s.mu.Unlock()
					go func() {
						<-w.ready
						s.release(ReadOnly, false)
						done <- struct{}{}
					}()
				}
				for _, r := range held {
					r()
				}
				for range k {
					<-done
				}
			}
			per := float64(b.Elapsed().Nanoseconds()) / float64(b.N*k)
			b.ReportMetric(per, "ns/job")
			if k == 16 {
				base = per
			} else if base > 0 {
				b.ReportMetric(per/base, "×K16/job")
			}
		})
	}
}
