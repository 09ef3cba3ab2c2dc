package taskdir

import (
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"syscall"
	"testing"
	"time"
)

// The records a parent writes for one child, in the order the dispatcher
// writes them. "layout=r3" is what brood wrote until issue 18's parent
// pass: a .lock file, the envelope synced, stderr.log and tmp/ made before
// every start, the dispatch log written at start and again at the end (ten
// new inodes, one freed). "layout=now" is what it writes now: the lock is a
// flock on the directory, the envelope is not synced, stderr.log is made on
// the child's first byte (none here), the child makes its own tmp/, the log
// is written once (six new inodes: directory, owner record, envelope,
// dispatch log, output.json, verdict; owner record and verdict synced).
type recordLayout struct {
	name  string
	child func(p Project, id string) error
}

func payload() map[string]any {
	return map[string]any{"task_id": "x", "agent": "explore", "brief": "read the README and say what it is", "depth": 1}
}

func layoutR3(p Project, id string) error {
	d, err := p.Task(id)
	if err != nil {
		return err
	}
	if err := d.Create(); err != nil {
		return err
	}
	lf, err := openFileBeneath(p.root, d.rel+"/"+Lock, syscall.O_RDWR|syscall.O_CREAT, 0o644)
	if err != nil {
		return err
	}
	defer lf.Close()
	if err := syscall.Flock(int(lf.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		return err
	}
	if err := p.Records().WriteOwner(id, payload()); err != nil {
		return err
	}
	if err := d.WriteJSON(Envelope, payload(), true); err != nil {
		return err
	}
	f, err := d.CreateFresh(Stderr)
	if err != nil {
		return err
	}
	f.Close()
	if _, err := d.FreshDir(Tmp, 0o700); err != nil {
		return err
	}
	for _, name := range []string{Log, Log, Output} {
		if err := d.WriteJSON(name, payload(), false); err != nil {
			return err
		}
	}
	return p.Records().WriteVerdict(id, payload())
}

func layoutNow(p Project, id string) error {
	d, err := p.Task(id)
	if err != nil {
		return err
	}
	if err := d.Create(); err != nil {
		return err
	}
	lf, err := d.OpenLock()
	if err != nil {
		return err
	}
	defer lf.Close()
	if err := syscall.Flock(int(lf.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		return err
	}
	if err := p.Records().WriteOwner(id, payload()); err != nil {
		return err
	}
	if err := d.WriteJSON(Envelope, payload(), false); err != nil {
		return err
	}
	for _, name := range []string{Stderr, Tmp} {
		if err := d.RemoveEntry(name); err != nil {
			return err
		}
	}
	for _, name := range []string{Log, Output} {
		if err := d.WriteJSON(name, payload(), false); err != nil {
			return err
		}
	}
	return p.Records().WriteVerdict(id, payload())
}

// cpuTime is this process's user+system time.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// BenchmarkTaskRecords writes K children's records at once (K goroutines,
// as K Task calls of one turn do) in a fresh project per iteration, both
// layouts in turn within each iteration (so load from elsewhere falls on
// both), and reports the CPU per child of each, the new layout's as a
// ratio to the old one's, and the CPU per child as a ratio to K=16's
// (linear growth reads 1.0). Nothing is deleted until the benchmark ends:
// ext4 without a journal scans past every inode deleted in the last minute
// when it allocates one, so a deletion between runs would be measured as
// the next run's cost.
//
//	go test ./internal/taskdir -run '^$' -bench TaskRecords -benchtime 5x
func BenchmarkTaskRecords(b *testing.B) {
	layouts := []recordLayout{{"r3", layoutR3}, {"now", layoutNow}}
	dir := b.TempDir()
	base := map[string]float64{}
	for _, k := range []int{16, 64, 256} {
		b.Run(fmt.Sprintf("K=%d", k), func(b *testing.B) {
			cpu := map[string]time.Duration{}
			for b.Loop() {
				for _, l := range layouts {
					cpu[l.name] += writeRecords(b, dir, k, l)
				}
			}
			per := map[string]float64{}
			for _, l := range layouts {
				per[l.name] = float64(cpu[l.name].Microseconds()) / float64(b.N*k)
				b.ReportMetric(per[l.name], "µs-cpu/child-"+l.name)
				if k == 16 {
					base[l.name] = per[l.name]
				} else if base[l.name] > 0 {
					b.ReportMetric(per[l.name]/base[l.name], "×K16-"+l.name)
				}
			}
			if per["r3"] > 0 {
				b.ReportMetric(per["now"]/per["r3"], "now÷r3")
			}
		})
	}
}

// writeRecords writes k children's records in layout l in a new project
// under dir and returns the CPU it took.
func writeRecords(b *testing.B, dir string, k int, l recordLayout) time.Duration {
	b.StopTimer()
	p := Open(filepath.Join(dir, NewID()))
	if err := os.Mkdir(p.root, 0o755); err != nil {
		b.Fatal(err)
	}
	if err := p.Ensure(); err != nil {
		b.Fatal(err)
	}
	if err := os.MkdirAll(p.DispatchRoot(), 0o755); err != nil {
		b.Fatal(err)
	}
	if err := os.MkdirAll(p.RecordsDir(), 0o755); err != nil {
		b.Fatal(err)
	}
	ids := make([]string, k)
	for i := range ids {
		ids[i] = NewID()
	}
	b.StartTimer()
	cpu0 := cpuTime()
	var wg sync.WaitGroup
	errs := make(chan error, k)
	for _, id := range ids {
		wg.Go(func() {
			if err := l.child(p, id); err != nil {
				errs <- err
			}
		})
	}
	wg.Wait()
	cpu := cpuTime() - cpu0
	close(errs)
	for err := range errs {
		b.Fatal(err)
	}
	return cpu
}
