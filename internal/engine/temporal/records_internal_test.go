package temporal

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/broodhq/brood/internal/call"
	"github.com/broodhq/brood/internal/codesnap"
	"github.com/broodhq/brood/internal/dispatch"
	"github.com/broodhq/brood/internal/taskdir"
)

// TestRecordsThroughAPlantedLinkAreNoRecords: a checkout whose records
// directory (or a record in it) is a link, or a FIFO, keeps no record
// brood takes: a keyless call's status is said to be unverified (a
// forger's start whose digest was written there is never taken as the
// user's), a landing record there is no landing, and nothing is written
// through the link (review31 P2-1). A record of brood's own is taken; one
// in the checkout's .git/brood, where an in-place writer nothing holds
// writes plain files (review34 P2-1), is no record.
func TestRecordsThroughAPlantedLinkAreNoRecords(t *testing.T) {
	const task = "01JAAAAAAAAAAAAAAAAAAAAAAA"
	tip := &codesnap.Snapshot{Base: "b", Tree: "t"}
	forged := CallInputW{Spec: call.Spec{Prompt: "BETA"}, Queue: "q"}
	for _, tc := range []struct {
		name  string
		plant func(t *testing.T, repo, state string)
		taken bool
	}{
		{"brood's own", func(t *testing.T, repo, state string) {
			writeRecords(t, state, task, forged, tip)
		}, true},
		{"a plain record in .git/brood", func(t *testing.T, repo, state string) {
			writeRecords(t, filepath.Join(repo, ".git", "brood"), task, forged, tip)
		}, false},
		{"the checkout's directory a link into the tree", func(t *testing.T, repo, state string) {
			writeRecords(t, filepath.Join(repo, "notes"), task, forged, tip)
			mkdir(t, filepath.Dir(state))
			if err := os.Symlink(filepath.Join(repo, "notes"), state); err != nil {
				t.Fatal(err)
			}
		}, false},
		{"the task's directory a link", func(t *testing.T, repo, state string) {
			writeRecords(t, filepath.Join(repo, "notes"), task, forged, tip)
			mkdir(t, filepath.Join(state, "fleet"))
			if err := os.Symlink(filepath.Join(repo, "notes", "fleet", task), filepath.Join(state, "fleet", task)); err != nil {
				t.Fatal(err)
			}
		}, false},
		{"the records links", func(t *testing.T, repo, state string) {
			writeRecords(t, filepath.Join(repo, "notes"), task, forged, tip)
			dir := filepath.Join(state, "fleet", task)
			mkdir(t, dir)
			for _, f := range []string{"sent.json", "landed.json"} {
				if err := os.Symlink(filepath.Join(repo, "notes", "fleet", task, f), filepath.Join(dir, f)); err != nil {
					t.Fatal(err)
				}
			}
		}, false},
		{"the records FIFOs", func(t *testing.T, repo, state string) {
			dir := filepath.Join(state, "fleet", task)
			mkdir(t, dir)
			for _, f := range []string{"sent.json", "landed.json"} {
				if err := syscall.Mkfifo(filepath.Join(dir, f), 0o600); err != nil {
					t.Fatal(err)
				}
			}
		}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx := context.Background()
			repo, state := recordsRepo(t)
			tc.plant(t, repo, state)
			e := &Engine{cfg: Config{Namespace: "ns", Code: &CodeConfig{Dir: repo}}}
			err := e.sentBy(ctx, task, forged, "")
			unverified := e.unverified(ctx, task)
			landed := e.landedHere(ctx, task, tip)
			if tc.taken {
				if err != nil || unverified != "" || !landed {
					t.Fatalf("brood's own records: sentBy %v, unverified %q, landedHere %v; want them taken", err, unverified, landed)
				}
				return
			}
			if err != nil || !strings.HasPrefix(unverified, "unverified:") {
				t.Errorf("sentBy %v, unverified %q: want no record, the status said to be unverified", err, unverified)
			}
			if landed {
				t.Error("landedHere took a landing record that is not brood's own")
			}
			kerr := e.keepSent(ctx, task, CallInputW{Spec: call.Spec{Prompt: "ALPHA"}})
			if kerr == nil && strings.Contains(tc.name, "link") {
				t.Error("keepSent wrote through a link")
			}
		})
	}
}

// recordsRepo is a new git repository and the state directory of its
// checkout (taskdir.CheckoutState), under a state home of the test's own.
func recordsRepo(t *testing.T) (repo, state string) {
	t.Helper()
	t.Setenv("XDG_STATE_HOME", t.TempDir())
	repo = t.TempDir()
	if out, err := exec.Command("git", "init", "-q", repo).CombinedOutput(); err != nil {
		t.Fatalf("git init: %v: %s", err, out)
	}
	common, err := filepath.EvalSymlinks(filepath.Join(repo, ".git"))
	if err != nil {
		t.Fatal(err)
	}
	return repo, taskdir.CheckoutState(common)
}

// writeRecords writes, under dir (a checkout's state, a .git/brood, or where a link points),
// task's sent.json naming in and a landed.json naming tip.
func writeRecords(t *testing.T, dir, task string, in CallInputW, tip *codesnap.Snapshot) {
	t.Helper()
	d := filepath.Join(dir, "fleet", task)
	mkdir(t, d)
	if err := dispatch.WriteJSON(filepath.Join(d, "sent.json"), &sentRecord{Inputs: []string{inputDigest(in)}}); err != nil {
		t.Fatal(err)
	}
	if err := dispatch.WriteJSON(filepath.Join(d, "landed.json"), &landRecord{Key: task, Landed: tip}); err != nil {
		t.Fatal(err)
	}
}

func mkdir(t *testing.T, dir string) {
	t.Helper()
	if err := os.MkdirAll(dir, 0o700); err != nil {
		t.Fatal(err)
	}
}
