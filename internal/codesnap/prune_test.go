package codesnap_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/broodhq/brood/internal/blobstore"
	"github.com/broodhq/brood/internal/codesnap"
	"github.com/broodhq/brood/internal/isolate"
)

// orphanEnv makes the test binary a worker that materialises a snapshot
// and dies without cleaning up (as kill -9 would leave it).
const orphanEnv = "CODESNAP_TEST_ORPHAN"

func TestMain(m *testing.M) {
	// First: a probe child answers and exits here, a view child mounts
	// its copy.
	ent, err := isolate.EnterFromEnv()
	if err != nil {
		fmt.Fprintln(os.Stderr, "enter:", err)
		os.Exit(90)
	}
	if spec := os.Getenv(viewEnv); spec != "" {
		os.Exit(runView(ent, spec))
	}
	if spec := os.Getenv(orphanEnv); spec != "" {
		os.Exit(orphan(spec))
	}
	os.Exit(m.Run())
}

type orphanSpec struct {
	Store, Cache string
	Remotes      []string
	Snap         *codesnap.Snapshot
}

func orphan(spec string) int {
	var o orphanSpec
	if err := json.Unmarshal([]byte(spec), &o); err != nil {
		return 2
	}
	ctx := context.Background()
	s, err := blobstore.Open(ctx, o.Store)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 3
	}
	cache := codesnap.Cache{Dir: o.Cache, Remotes: o.Remotes}
	if _, err := cache.Materialise(ctx, s, o.Snap, codesnap.Options{ID: "orphan"}); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 4
	}
	return 0 // no Cleanup: the copy is left behind
}

func TestPruneJobs(t *testing.T) {
	ctx := t.Context()
	h := newHosts(t)
	snap, err := codesnap.Capture(ctx, h.store, h.repo)
	if err != nil {
		t.Fatal(err)
	}
	spec, _ := json.Marshal(orphanSpec{Store: "file://" + h.storeDir, Cache: h.cache.Dir, Remotes: h.cache.Remotes, Snap: snap})
	exe, _ := os.Executable()
	cmd := exec.Command(exe, "-test.run=^$")
	cmd.Env = append(os.Environ(), orphanEnv+"="+string(spec))
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("orphan worker: %v\n%s", err, out)
	}
	live, err := h.cache.Materialise(ctx, h.store, snap, codesnap.Options{ID: "live"})
	if err != nil {
		t.Fatal(err)
	}
	defer live.Cleanup()
	jobs, _ := filepath.Glob(filepath.Join(h.cache.Dir, "jobs", "*"))
	if len(jobs) != 2 {
		t.Fatalf("jobs: %v", jobs)
	}
	// Both look old; only the orphan's lock is free.
	old := time.Now().Add(-time.Hour)
	for _, j := range jobs {
		os.Chtimes(j, old, old)
	}
	n, err := h.cache.PruneJobs(ctx)
	if err != nil || n != 1 {
		t.Fatalf("PruneJobs = %d, %v; want 1", n, err)
	}
	if _, err := os.Stat(live.Root); err != nil {
		t.Fatalf("the live copy was removed: %v", err)
	}
	left, _ := filepath.Glob(filepath.Join(h.cache.Dir, "jobs", "orphan-*"))
	if len(left) != 0 {
		t.Fatalf("the orphan's copy is still there: %v", left)
	}
}
