package codesnap

import (
	"compress/flate"
	"context"
	"io"
	"os"
	"path/filepath"
	"strings"
	"syscall"
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
//
// Bulk checkin deflates at pack.compression, and the dirty pack reuses
// those bytes (pack.go). Where the sample barely compresses (zlib keeps
// 70% or more of it: random or already compressed data; source text keeps
// 35–45%), the blobs go in stored, uncompressed: deflating them costs the
// submitter CPU for a quarter off the size, and every worker inflates them
// again as it indexes the pack (index-pack of issue 26's 43 MiB, three
// workers at once on two cores: 0.59 of the time, median of 6 rounds).

const (
	// bulkMinFiles: below this many files for add to read, loose objects
	// cost too little to probe for.
	bulkMinFiles = 128
	// bulkSample is how many of them are hashed to decide.
	bulkSample = 32
)

// checkinArgs are the options for add -A (run by g, in the work tree top):
// bulk checkin where there are many files to read and at least 3 in 8 of a
// sample are objects the repository lacks (about where the two ways cost
// the same: a loose write costs a new object about 2.5 times what a bulk
// one does, and a bulk one deflates an existing object for nothing), and
// no compression where the sample does not compress; nil: loose objects.
// A probe that fails says bulk (the former way; add reports a real error).
func checkinArgs(ctx context.Context, g gitCmd, top string) []string {
	bulk := []string{"-c", "core.bigFileThreshold=1"}
	// diff-files lists the entries whose stat data differs without
	// reading them (ls-files -m hashes each one whose size is the same:
	// a start from the capture index, every file rewritten, 0.35 s).
	changed, err := g.run(ctx, "-c", "core.fsmonitor=false", "diff-files", "--name-only", "-z")
	if err != nil {
		return bulk
	}
	others, err := g.run(ctx, "-c", "core.fsmonitor=false", "ls-files", "-z", "-o", "--exclude-standard")
	if err != nil {
		return bulk
	}
	var files []string
	for _, p := range strings.Split(changed+others, "\x00") {
		// (A directory is a nested repository; a name with a newline
		// cannot go through --stdin-paths.)
		if p != "" && !strings.HasSuffix(p, "/") && !strings.Contains(p, "\n") {
			files = append(files, p)
		}
	}
	if len(files) < bulkMinFiles {
		return nil
	}
	var sample []string
	for i := range bulkSample {
		p := files[i*len(files)/bulkSample]
		if info, err := os.Lstat(filepath.Join(top, p)); err == nil && info.Mode().IsRegular() {
			sample = append(sample, p)
		}
	}
	if len(sample) == 0 {
		return nil // nothing regular: deleted files, links
	}
	g.stdin = []byte(strings.Join(sample, "\n") + "\n")
	ids, err := g.run(ctx, "hash-object", "--stdin-paths")
	if err != nil || len(strings.Fields(ids)) != len(sample) {
		return bulk
	}
	g.stdin = []byte(ids)
	found, err := g.run(ctx, "cat-file", "--batch-check=%(objectname)")
	if err != nil {
		return bulk
	}
	if missing := strings.Count(found, " missing\n"); missing*8 < len(sample)*3 {
		return nil
	}
	if !compresses(top, sample) {
		bulk = append(bulk, "-c", "pack.compression=0")
	}
	return bulk
}

// compresses says whether zlib (at its fastest, each file alone, as git
// deflates each blob) shrinks the files (their first 64 KiB each) to under
// 70% of their size.
func compresses(top string, files []string) bool {
	var raw, packed countWriter
	zw, _ := flate.NewWriter(&packed, flate.BestSpeed)
	for _, p := range files {
		// Never a link, never a FIFO that would block, only a regular file.
		f, err := os.OpenFile(filepath.Join(top, p), os.O_RDONLY|syscall.O_NOFOLLOW|syscall.O_NONBLOCK, 0)
		if err != nil {
			continue
		}
		if fi, err := f.Stat(); err != nil || !fi.Mode().IsRegular() {
			f.Close()
			continue
		}
		zw.Reset(&packed)
		n, _ := io.Copy(zw, io.LimitReader(f, 64<<10))
		f.Close()
		zw.Close()
		raw += countWriter(n)
	}
	return raw == 0 || packed*10 < raw*7
}

// countWriter counts what is written to it.
type countWriter int64

func (c *countWriter) Write(p []byte) (int, error) {
	*c += countWriter(len(p))
	return len(p), nil
}
