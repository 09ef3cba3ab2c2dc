package codesnap

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"

	"github.com/broodhq/brood/internal/taskdir"
)

// recordExcludes are pathspecs that leave brood's own run records out of
// a submission at any depth (a project's .brood/dispatch, workflows,
// fleet, ...: taskdir.RecordNames), whatever the tree's ignore rules say:
// a submitter with no .brood/.gitignore, or an older one without fleet/,
// would otherwise ship every earlier run's results and kept patches to
// every call (and make a clean tree dirty). They keep add from reading
// untracked records; dropRecords removes the tracked ones.
func recordExcludes() []string {
	var out []string
	for _, n := range taskdir.RecordNames() {
		p := ":(exclude,glob)**/" + taskdir.StateDirName + "/" + strings.TrimSuffix(n, "/")
		if strings.HasSuffix(n, "/") {
			p += "/**"
		}
		out = append(out, p)
	}
	return out
}

// isRecord: path (slash-separated, from the tree's top) is one of brood's
// run records, as recordExcludes match them: a file at any depth under
// .brood/NAME/ for a directory record, or .brood/NAME for a file record.
func isRecord(path string) bool {
	if !strings.Contains(path, taskdir.StateDirName+"/") {
		return false
	}
	parts := strings.Split(path, "/")
	for i := 0; i+1 < len(parts); i++ {
		if parts[i] != taskdir.StateDirName {
			continue
		}
		for _, n := range taskdir.RecordNames() {
			if dir, ok := strings.CutSuffix(n, "/"); ok {
				if parts[i+1] == dir && i+2 < len(parts) {
					return true
				}
			} else if parts[i+1] == n && i+2 == len(parts) {
				return true
			}
		}
	}
	return false
}

// baseRecords puts brood's run records in the capture's private index as
// the base commit has them, after its add: the excludes keep add from
// adding or updating them, so an entry the user's index already had (a
// record committed before .brood/.gitignore listed it) would ship as that
// index has it, not as on disk, and one deleted on disk would come back
// in the worker's copy (review37 P3-1). So no record ships from the
// submitter: one the index tracks goes as committed (the base's, which
// every worker has), or not at all where the base lacks it; a clean
// checkout that tracks one stays clean (review38 P3-5). The records the
// index holds (isRecord; git ls-files by the excludes' own patterns for
// an index this does not parse: version 4, a split index, conflicts,
// intent-to-add entries) go to git reset BASE (git rm --cached with no
// base). Nothing runs where the index holds no record.
func baseRecords(ctx context.Context, g gitCmd, index, format, base string) error {
	paths, err := indexRecords(ctx, g, index, format)
	if err != nil || len(paths) == 0 {
		return err
	}
	// The paths go as they are, literal (gitx's GIT_LITERAL_PATHSPECS=1,
	// not the excludes' GIT_LITERAL_PATHSPECS=0): a record may be named
	// like pathspec magic or a glob (":!x/.brood/outputs/y", which as
	// magic would reset every other path to the base; "*/.brood/...");
	// read literally, each names its own entry alone.
	reset := g
	reset.stdin = []byte(strings.Join(paths, "\x00") + "\x00")
	args := []string{"reset", "-q", base, "--pathspec-from-file=-", "--pathspec-file-nul"}
	if base == "" {
		args = []string{"rm", "--cached", "-r", "-f", "-q", "--ignore-unmatch", "--pathspec-from-file=-", "--pathspec-file-nul"}
	}
	if _, err := reset.run(ctx, args...); err != nil {
		return fmt.Errorf("codesnap: put brood's run records in the snapshot as the base commit has them: %w", err)
	}
	return nil
}

// indexRecords are the paths of the index file's entries that are brood's
// run records.
func indexRecords(ctx context.Context, g gitCmd, index, format string) ([]string, error) {
	data, err := os.ReadFile(index)
	switch {
	case errors.Is(err, os.ErrNotExist):
		return nil, nil // add wrote no index: nothing in the tree
	case err != nil:
		return nil, fmt.Errorf("codesnap: read the snapshot's index: %w", err)
	}
	oidLen, _ := objectHash(format)
	var paths []string
	if entries, ok := parseIndex(data, oidLen); ok {
		for i := range entries {
			if isRecord(entries[i].path) {
				paths = append(paths, entries[i].path)
			}
		}
		return paths, nil
	}
	ls := g
	ls.env = append(append([]string(nil), g.env...), "GIT_LITERAL_PATHSPECS=0")
	args := []string{"ls-files", "-z", "--"}
	for _, p := range recordExcludes() {
		args = append(args, strings.Replace(p, ":(exclude,glob)", ":(glob)", 1))
	}
	out, err := ls.run(ctx, args...)
	if err != nil {
		return nil, fmt.Errorf("codesnap: list brood's run records in the snapshot's index: %w", err)
	}
	for p := range strings.SplitSeq(out, "\x00") {
		if p != "" {
			paths = append(paths, p)
		}
	}
	return paths, nil
}
