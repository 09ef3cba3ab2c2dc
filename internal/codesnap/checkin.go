package codesnap

import (
	"context"
	"os"
	"path/filepath"
	"strings"
)

// How Capture's `git add -A` writes the blobs it reads. Loose objects (git's
// default) cost a file each: 11,000 new files of 4 KiB took 2.4 s against
// 0.96 s with bulk checkin (core.bigFileThreshold=1: every blob streamed
// into one pack). But bulk checkin deflates each blob before it looks
// whether the object exists, where a loose write hashes first and writes
// nothing for an object the repository has: re-capturing that same dirty
// tree, as every submission after the first does, cost 0.73–0.98 s in bulk
// against 0.10–0.13 s loose. So Capture asks which it is first: it lists
// what add will read (the files whose stat data differs from the index,
// and the untracked ones), hashes a spread sample of them without writing
// (git hash-object, with the files' filters, as add does) and asks the
// repository which of those objects it lacks (git cat-file --batch-check).
// Either way add writes the same objects and the same tree: the choice
// only moves time.

const (
	// bulkMinFiles: below this many files for add to read, loose objects
	// cost too little to probe for.
	bulkMinFiles = 128
	// bulkSample is how many of them are hashed to decide.
	bulkSample = 32
)

// bulkCheckin says whether add -A (run by g, in the work tree top) should
// stream new blobs into one pack: there are many files to read and at least
// 3 in 8 of a sample are objects the repository lacks (about where the two
// ways cost the same: a loose write costs a new object about 2.5 times what
// a bulk one does, and a bulk one deflates an existing object for nothing).
// A probe that fails says yes (the former way; add reports a real error).
func bulkCheckin(ctx context.Context, g gitCmd, top string) bool {
	out, err := g.run(ctx, "-c", "core.fsmonitor=false", "ls-files", "-z", "-m", "-o", "--exclude-standard")
	if err != nil {
		return true
	}
	var files []string
	for _, p := range strings.Split(out, "\x00") {
		// (A directory is a nested repository; a name with a newline
		// cannot go through --stdin-paths.)
		if p != "" && !strings.HasSuffix(p, "/") && !strings.Contains(p, "\n") {
			files = append(files, p)
		}
	}
	if len(files) < bulkMinFiles {
		return false
	}
	var sample strings.Builder
	n := 0
	for i := range bulkSample {
		p := files[i*len(files)/bulkSample]
		if info, err := os.Lstat(filepath.Join(top, p)); err == nil && info.Mode().IsRegular() {
			sample.WriteString(p + "\n")
			n++
		}
	}
	if n == 0 {
		return false // nothing regular: deleted files, links
	}
	g.stdin = []byte(sample.String())
	ids, err := g.run(ctx, "hash-object", "--stdin-paths")
	if err != nil || len(strings.Fields(ids)) != n {
		return true
	}
	g.stdin = []byte(ids)
	found, err := g.run(ctx, "cat-file", "--batch-check=%(objectname)")
	if err != nil {
		return true
	}
	missing := strings.Count(found, " missing\n")
	return missing*8 >= n*3
}
