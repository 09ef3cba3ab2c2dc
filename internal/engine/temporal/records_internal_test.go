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
)

// TestRecordsThroughAPlantedLinkAreNoRecords: a checkout whose .git/brood
// (or a record in it) a child made a link into the work tree, or a FIFO,
// keeps no record brood takes: a keyless call's status is said to be
// unverified (a forger's start that a later child wrote the digest of is
// never taken as the user's), a landing record there is no landing, and
// nothing is written through the link (review31 P2-1). A record of brood's
// own is taken.
func TestRecordsThroughAPlantedLinkAreNoRecords(t *testing.T) {
	const task = "01JAAAAAAAAAAAAAAAAAAAAAAA"
	tip := &codesnap.Snapshot{Base: "b", Tree: "t"}
	forged := CallInputW{Spec: call.Spec{Prompt: "BETA"}, Queue: "q"}
	for _, tc := range []struct {
		name  string
		plant func(t *testing.T, repo, common string)
		taken bool
	}{
		{"brood's own", func(t *testing.T, repo, common string) {
			writeRecords(t, filepath.Join(common, "brood"), task, forged, tip)
		}, true},
		{".git/brood a link into the tree", func(t *testing.T, repo, common string) {
			writeRecords(t, filepath.Join(repo, "notes"), task, forged, tip)
			if err := os.Symlink("../notes", filepath.Join(common, "brood")); err != nil {
				t.Fatal(err)
			}
		}, false},
		{"the task's directory a link", func(t *testing.T, repo, common string) {
			writeRecords(t, filepath.Join(repo, "notes"), task, forged, tip)
			mkdir(t, filepath.Join(common, "brood", "fleet"))
			if err := os.Symlink(filepath.Join(repo, "notes", "fleet", task), filepath.Join(common, "brood", "fleet", task)); err != nil {
				t.Fatal(err)
			}
		}, false},
		{"the records links", func(t *testing.T, repo, common string) {
			writeRecords(t, filepath.Join(repo, "notes"), task, forged, tip)
			dir := filepath.Join(common, "brood", "fleet", task)
			mkdir(t, dir)
			for _, f := range []string{"sent.json", "landed.json"} {
				if err := os.Symlink(filepath.Join(repo, "notes", "fleet", task, f), filepath.Join(dir, f)); err != nil {
					t.Fatal(err)
				}
			}
		}, false},
		{"the records FIFOs", func(t *testing.T, repo, common string) {
			dir := filepath.Join(common, "brood", "fleet", task)
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
			repo := t.TempDir()
			if out, err := exec.Command("git", "init", "-q", repo).CombinedOutput(); err != nil {
				t.Fatalf("git init: %v: %s", err, out)
			}
			common := filepath.Join(repo, ".git")
			tc.plant(t, repo, common)
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
			if kerr := e.keepSent(ctx, task, CallInputW{Spec: call.Spec{Prompt: "ALPHA"}}); kerr == nil && tc.name != "the records FIFOs" {
				t.Error("keepSent wrote through a link")
			}
		})
	}
}

// writeRecords writes, under dir (a .git/brood or where a link points),
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
