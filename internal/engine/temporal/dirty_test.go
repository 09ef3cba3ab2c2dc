package temporal_test

import (
	"bytes"
	"compress/zlib"
	"context"
	"encoding/binary"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/broodhq/brood/internal/engine"
	"github.com/broodhq/brood/internal/engine/enginetest"
	"github.com/broodhq/brood/internal/workflow"
)

// dirtyScript: "write wN" writes out-N.txt; "look" lists the tree.
const dirtyScript = `
agents:
  general-purpose:
    - cases:
        - if: "write w"
          tools:
            - Write: {file_path: 'out-{{match "w([0-9]+)" .Prompt}}.txt', content: 'written by {{match "w([0-9]+)" .Prompt}}'}
      say: "nothing to do"
    - say: "## What I did\nWrote.\n\n## Files changed\nout.txt"
  explore:
    - tools:
        - Read: {file_path: "u/17.txt"}
    - say: "## What I found\n{{result 0}}\n\n## Files changed\nnone"
`

// dirtyRepo is a submitter's checkout with a committed tree, nmod of its
// files modified and nnew untracked ones, each with a line no other file
// has (marker i).
func dirtyRepo(t *testing.T, nmod, nnew int) (string, []string) {
	t.Helper()
	dir := t.TempDir()
	gitT(t, dir, "init", "-q")
	for i := range nmod {
		writeAt(t, dir, fmt.Sprintf("m/%d.txt", i), fmt.Sprintf("committed %d\n", i))
	}
	gitT(t, dir, "add", "-A")
	gitT(t, dir, "-c", "user.name=t", "-c", "user.email=t@e", "commit", "-qm", "base")
	var markers []string
	for i := range nmod {
		m := fmt.Sprintf("modified-marker-%d-%x", i, i*7919)
		markers = append(markers, m)
		writeAt(t, dir, fmt.Sprintf("m/%d.txt", i), m+"\n")
	}
	for i := range nnew {
		m := fmt.Sprintf("untracked-marker-%d-%x", i, i*104729)
		markers = append(markers, m)
		writeAt(t, dir, fmt.Sprintf("u/%d.txt", i), m+"\n"+strings.Repeat("padding ", 64)+"\n")
	}
	return dir, markers
}

func writeAt(t *testing.T, dir, name, s string) {
	t.Helper()
	p := filepath.Join(dir, filepath.FromSlash(name))
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(s), 0o644); err != nil {
		t.Fatal(err)
	}
}

// TestDirtyStateStoredOncePerRun is issue 26's "dirty state once per run":
// a 12-agent plan (twelve writers, each adding a file, whose changes the
// run's tree takes one after another, then a reader) from a checkout with
// many modified and untracked files. Every call sees the dirty state, and
// the store holds each dirty file's content once: the run's tree grows by
// the writers' changes, never by another copy of the dirty state.
func TestDirtyStateStoredOncePerRun(t *testing.T) {
	srv := sharedServer(t)
	q := newQueue(t)
	storeDir := t.TempDir()
	store := "file://" + storeDir
	startWorkerProcWith(t, srv.Addr, q, dirtyScript, store, 3, writerSettings)
	dir, markers := dirtyRepo(t, 40, 200)
	eng := codeEngine(t, q, dir, store)
	var plan strings.Builder
	plan.WriteString("name: dirty\nphases:\n  - id: write\n    parallel:\n")
	for i := 1; i <= 12; i++ {
		fmt.Fprintf(&plan, "      - {agent: general-purpose, prompt: \"write w%d\"}\n", i)
	}
	plan.WriteString("  - id: read\n    parallel:\n      - {agent: explore, prompt: \"look\"}\n")
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	res, err := eng.Run(ctx, engine.RunRequest{Plan: enginetest.Plan(t, plan.String()), Source: "plan.yaml"})
	if err != nil {
		t.Fatal(err)
	}
	if res.Status != workflow.RunDone || res.Agents != 13 {
		var why []string
		for _, ph := range res.Phases {
			for _, c := range ph.Calls {
				why = append(why, fmt.Sprintf("%s %s: %s %v", c.Key, c.Status, c.Error, c.Failures))
			}
		}
		t.Fatalf("run %s (%s), %d agents; want done with 13:\n%s", res.Status, res.Reason, res.Agents, strings.Join(why, "\n"))
	}
	for i := 1; i <= 12; i++ {
		if got := read(t, dir, fmt.Sprintf("out-%d.txt", i)); got != fmt.Sprintf("written by %d", i) {
			t.Fatalf("out-%d.txt landed as %q", i, got)
		}
	}
	if out := fmt.Sprint(res.Phases[1].Calls[0].Output); !strings.Contains(out, "untracked-marker-17-") {
		t.Fatalf("the reader did not see the untracked file: %s", out)
	}
	// Each dirty file's content is in exactly one object of the store.
	seen := map[string]int{}
	var objects int
	var size int64
	err = filepath.WalkDir(filepath.Join(storeDir, "sha256"), func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		objects++
		size += int64(len(b))
		for _, text := range storedTexts(t, b) {
			for _, m := range markers {
				if strings.Contains(text, m+"\n") {
					seen[m]++
				}
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range markers {
		if seen[m] != 1 {
			t.Fatalf("%s is in %d objects of the store, want 1 (%d objects, %d bytes)", m, seen[m], objects, size)
		}
	}
	t.Logf("store: %d objects, %d bytes, for %d dirty files", objects, size, len(markers))
}

// storedTexts is what a store object holds: a git pack's objects,
// inflated (the dirty state's pack has no deltas), or the object itself.
func storedTexts(t *testing.T, b []byte) []string {
	t.Helper()
	if !bytes.HasPrefix(b, []byte("PACK")) || len(b) < 12 {
		return []string{string(b)}
	}
	r := bytes.NewReader(b[12:])
	var out []string
	for range binary.BigEndian.Uint32(b[8:12]) {
		c, err := r.ReadByte()
		for err == nil && c&0x80 != 0 {
			c, err = r.ReadByte()
		}
		if err != nil {
			t.Fatalf("a pack in the store: %v", err)
		}
		z, err := zlib.NewReader(r)
		if err != nil {
			t.Fatalf("a pack in the store: %v", err)
		}
		data, err := io.ReadAll(z)
		if err != nil {
			t.Fatalf("a pack in the store: %v", err)
		}
		out = append(out, string(data))
	}
	return out
}
