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

// dropRecords removes brood's run records from the capture's private
// index after its add, tracked ones included: the excludes keep add from
// adding or updating them, so an entry the user's index already had (a
// record committed before .brood/.gitignore listed it) would ship as that
// index has it, not as it is on disk, and one deleted on disk would come
// back in the worker's copy (review37 P3-1). The records the index holds
// (isRecord) go to git rm --cached as they are; an index this does not
// parse (version 4, a split index, conflicts, intent-to-add entries)
// goes through it with the excludes' own patterns. Nothing runs where the
// index holds no record.
func dropRecords(ctx context.Context, g gitCmd, index, format string) error {
	data, err := os.ReadFile(index)
	switch {
	case errors.Is(err, os.ErrNotExist):
		return nil // add wrote no index: nothing to ship
	case err != nil:
		return fmt.Errorf("codesnap: read the snapshot's index: %w", err)
	}
	oidLen, _ := objectHash(format)
	rm := g
	args := []string{"rm", "--cached", "-r", "-f", "-q", "--ignore-unmatch"}
	if entries, ok := parseIndex(data, oidLen); ok {
		var paths []string
		for i := range entries {
			if isRecord(entries[i].path) {
				paths = append(paths, entries[i].path)
			}
		}
		if len(paths) == 0 {
			return nil
		}
		rm.stdin = []byte(strings.Join(paths, "\x00") + "\x00")
		args = append(args, "--pathspec-from-file=-", "--pathspec-file-nul")
	} else {
		rm.env = append(append([]string(nil), g.env...), "GIT_LITERAL_PATHSPECS=0")
		args = append(args, "--")
		for _, p := range recordExcludes() {
			args = append(args, strings.Replace(p, ":(exclude,glob)", ":(glob)", 1))
		}
	}
	if _, err := rm.run(ctx, args...); err != nil {
		return fmt.Errorf("codesnap: leave brood's run records out of the snapshot: %w", err)
	}
	return nil
}
