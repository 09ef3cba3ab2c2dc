package taskdir

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"syscall"
	"testing"
	"time"
)

// spawnRecords writes what a dispatch writes before its child can start
// (the directory, its flock, the owner record, the envelope) and returns
// how long that took; durable says whether the owner record's fsync runs
// in the background (WriteOwnerDurable, waited for after the clock stops,
// as the verdict waits for it) or on the path (WriteOwner).
func spawnRecords(p Project, id string, durable bool) (time.Duration, error) {
	t0 := time.Now()
	d, err := p.Task(id)
	if err != nil {
		return 0, err
	}
	if err := d.Create(); err != nil {
		return 0, err
	}
	lf, err := d.OpenLock()
	if err != nil {
		return 0, err
	}
	defer lf.Close()
	if err := syscall.Flock(int(lf.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		return 0, err
	}
	var wait func() error
	if durable {
		dw, err := p.Records().WriteOwnerDurable(id, payload())
		if err != nil {
			return 0, err
		}
		wait = dw.Wait
	} else if err := p.Records().WriteOwner(id, payload()); err != nil {
		return 0, err
	}
	if err := d.WriteJSON(Envelope, payload(), false); err != nil {
		return 0, err
	}
	took := time.Since(t0)
	if wait != nil {
		return took, wait()
	}
	return took, nil
}

// BenchmarkSpawnRecords is the records stage of the spawn path, K children
// at once, with the owner record synced on the path ("sync") and in the
// background ("durable"), interleaved within each iteration so that load
// from elsewhere falls on both. It reports each one's median time to the
// child's start per child, and durable ÷ sync.
//
//	go test ./internal/taskdir -run '^$' -bench SpawnRecords -benchtime 20x
func BenchmarkSpawnRecords(b *testing.B) {
	dir := b.TempDir()
	for _, k := range []int{1, 16} {
		b.Run(fmt.Sprintf("K=%d", k), func(b *testing.B) {
			took := map[bool][]time.Duration{}
			for b.Loop() {
				for _, durable := range []bool{false, true} {
					took[durable] = append(took[durable], spawnRecordsOnce(b, dir, k, durable)...)
				}
			}
			med := func(ds []time.Duration) float64 {
				slices.Sort(ds)
				return float64(ds[len(ds)/2].Microseconds()) / 1000
			}
			s, d := med(took[false]), med(took[true])
			b.ReportMetric(s, "ms-sync")
			b.ReportMetric(d, "ms-durable")
			if s > 0 {
				b.ReportMetric(d/s, "durable÷sync")
			}
		})
	}
}

func spawnRecordsOnce(b *testing.B, dir string, k int, durable bool) []time.Duration {
	p := Open(filepath.Join(dir, NewID()))
	if err := os.Mkdir(p.root, 0o755); err != nil {
		b.Fatal(err)
	}
	for _, mk := range []func() error{p.Ensure, func() error { return os.MkdirAll(p.RecordsDir(), 0o755) }} {
		if err := mk(); err != nil {
			b.Fatal(err)
		}
	}
	out := make([]time.Duration, k)
	errs := make([]error, k)
	var wg sync.WaitGroup
	for i := range k {
		wg.Go(func() { out[i], errs[i] = spawnRecords(p, NewID(), durable) })
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			b.Fatal(err)
		}
	}
	return out
}
