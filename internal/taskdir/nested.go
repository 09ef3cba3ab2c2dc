package taskdir

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
)

// Tasks is the directory, inside a task directory, that holds the task
// directories of the children that task dispatched itself (a delegating
// child: its rules name its own directory and nothing else beneath
// .brood/dispatch, so its children's directories are beneath its own):
// .brood/dispatch/<id>/tasks/<child id>/tasks/<grandchild id>/...
const Tasks = "tasks"

// maxNest bounds how deep a walk goes below a top-level task (the depth
// cap, maxSubagentDepth, is at most 4; a child could make deeper
// directories, which no real task is in).
const maxNest = 8

// Child is the directory of the child task id that the task d dispatched:
// d's tasks/<id>.
func (d *Dir) Child(id string) (*Dir, error) {
	if err := CheckID(id); err != nil {
		return nil, err
	}
	return &Dir{project: d.project, id: id, rel: filepath.Join(d.rel, Tasks, id)}, nil
}

// Parent is the directory of the task that dispatched d when d is nested
// beneath it (nil for a top-level task: the root's, or one an older brood
// made flat in .brood/dispatch).
func (d *Dir) Parent() *Dir {
	up := filepath.Dir(d.rel)
	if filepath.Base(up) != Tasks {
		return nil
	}
	prel := filepath.Dir(up)
	return &Dir{project: d.project, id: filepath.Base(prel), rel: prel}
}

// Nested reports whether d is beneath another task's directory.
func (d *Dir) Nested() bool { return d.Parent() != nil }

// createNested makes a nested task's directory (and its parent's tasks/)
// without following links; the parent's directory must exist.
func (d *Dir) createNested() error {
	err := mkdirLeafBeneath(d.project.base, d.rel, taskDirMode)
	if !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	if err := mkdirLeafBeneath(d.project.base, filepath.Dir(d.rel), taskDirMode); err != nil {
		return err
	}
	return mkdirLeafBeneath(d.project.base, d.rel, taskDirMode)
}

// Find is the directory of task id wherever it is: .brood/dispatch/<id>
// (the root's children, and every task of an older, flat brood), else
// nested beneath the task that dispatched it. The flat look is one lstat;
// a nested task is found by the root's record of where it is (WriteWhere),
// else (no such record: its root stopped first, an older brood) by a walk
// of the directories that hold nested tasks.
func (p Project) Find(id string) (*Dir, error) {
	d, err := p.Task(id)
	if err != nil {
		return nil, err
	}
	if d.Exists() {
		return d, nil
	}
	if w := p.Records().where(id); w != nil && w.Exists() {
		return w, nil
	}
	var found []*Dir
	err = p.walk(func(t *Dir) bool {
		if t.id == id {
			found = append(found, t)
		}
		return true
	})
	if err != nil {
		return nil, err
	}
	switch len(found) {
	case 0:
		return nil, fmt.Errorf("no task %s under %s (see `brood tasks`): %w", id, p.DispatchRoot(), fs.ErrNotExist)
	case 1:
		return found[0], nil
	}
	// Only a child makes a nested directory: one named by another task's
	// id is a forgery, and which is real is not this listing's to guess.
	var where []string
	for _, t := range found {
		where = append(where, t.Path())
	}
	return nil, fmt.Errorf("task %s is in %d places (%s): a subagent made a directory named by another task's id; use the path", id, len(found), strings.Join(where, ", "))
}

// Tasks lists every task directory, top-level and nested, newest first.
// Entries that are not real directories named by a task id are skipped.
// An id in more than one place (a child made a directory beneath its own
// named by another task's id) is listed once where Find would find it (a
// top-level one, else the one the root's records place: Recorded), and
// where neither decides, in every place, each read as its own task.
func (p Project) Tasks() ([]*Dir, error) {
	var all []*Dir
	err := p.walk(func(t *Dir) bool { all = append(all, t); return true })
	places := map[string][]*Dir{}
	for _, d := range all {
		places[d.id] = append(places[d.id], d)
	}
	out := all[:0]
	for _, d := range all {
		if ds := places[d.id]; len(ds) == 1 || d == p.decide(ds) || p.decide(ds) == nil {
			out = append(out, d)
		}
	}
	slices.SortStableFunc(out, func(a, b *Dir) int { return strings.Compare(b.id, a.id) })
	return out, err
}

// decide is which of the places of one id is the task's: the top-level
// one, else the one the root's records name; nil if neither.
func (p Project) decide(ds []*Dir) *Dir {
	for _, d := range ds {
		if !d.Nested() {
			return d
		}
	}
	for _, d := range ds {
		if p.Records().Recorded(d) {
			return d
		}
	}
	return nil
}

// Recorded reports whether the root's records name d as where its
// nested task is (WriteWhere): the root heard of it from the child it is
// nested below, so it is no forgery of another task's id.
func (r Records) Recorded(d *Dir) bool {
	w := r.where(d.id)
	return w != nil && w.rel == d.rel
}

// ForgetWhere removes the root's record of where d's task is, if it names d.
func (r Records) ForgetWhere(d *Dir) {
	if r.Recorded(d) {
		_ = removeBeneath(r.project.base, filepath.Join(r.rel, d.id+whereSuffix))
	}
}

// walk calls fn on every task directory (top-level ones, then the nested
// ones beneath each) until fn returns false.
func (p Project) walk(fn func(*Dir) bool) error {
	ents, err := os.ReadDir(p.DispatchRoot())
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	for _, e := range ents {
		if e.Type()&fs.ModeType != fs.ModeDir || CheckID(e.Name()) != nil {
			continue
		}
		d := &Dir{project: p, id: e.Name(), rel: filepath.Join(p.name, "dispatch", e.Name())}
		if !fn(d) || !d.walkNested(fn, 1) {
			return nil
		}
	}
	return nil
}

// walkNested calls fn on the tasks nested beneath d; false once fn did.
func (d *Dir) walkNested(fn func(*Dir) bool, level int) bool {
	if level > maxNest {
		return true
	}
	// lstat, not stat: a link a child planted at tasks/ is not walked.
	holder := filepath.Join(d.project.base, d.rel, Tasks)
	if st, err := os.Lstat(holder); err != nil || !st.IsDir() {
		return true
	}
	ents, err := os.ReadDir(holder)
	if err != nil {
		return true
	}
	for _, e := range ents {
		if e.Type()&fs.ModeType != fs.ModeDir || CheckID(e.Name()) != nil {
			continue
		}
		c := &Dir{project: d.project, id: e.Name(), rel: filepath.Join(d.rel, Tasks, e.Name())}
		if !fn(c) || !c.walkNested(fn, level+1) {
			return false
		}
	}
	return true
}

// SplitTaskPath splits the path of a task directory, top-level or nested,
// into the dispatch directory that holds it and the path beneath it
// (<id>, or <id>/tasks/<child id>/...); ok is false for anything else.
func SplitTaskPath(path string) (dispatchDir, rel string, ok bool) {
	path = filepath.Clean(path)
	var chain []string
	for range maxNest + 1 {
		id := filepath.Base(path)
		if CheckID(id) != nil {
			return "", "", false
		}
		chain = append(chain, id)
		up := filepath.Dir(path)
		if filepath.Base(up) != Tasks {
			if filepath.Base(up) != "dispatch" {
				return "", "", false
			}
			slices.Reverse(chain)
			return up, filepath.Join(strings.Join(chain, string(filepath.Separator)+Tasks+string(filepath.Separator))), true
		}
		path = filepath.Dir(up)
	}
	return "", "", false
}

// whereSuffix names the root's record of where a nested task is.
const whereSuffix = ".where.json"

// WriteWhere records, in the root's records (out of every child's reach),
// where a nested task is: chain is the ids from the top-level task down
// to it, as the root knows its descendants (each reported once, below the
// direct child that relayed it). Find reads it instead of walking.
func (r Records) WriteWhere(chain []string) error {
	if len(chain) < 2 || len(chain) > maxNest+1 {
		return fmt.Errorf("taskdir: a nested task's place has 2 to %d ids, not %d", maxNest+1, len(chain))
	}
	for _, id := range chain {
		if err := CheckID(id); err != nil {
			return err
		}
	}
	data, err := encode("where", chain)
	if err != nil {
		return err
	}
	rel := filepath.Join(r.rel, chain[len(chain)-1]+whereSuffix)
	err = writeBeneath(r.project.base, rel, data, false)
	if !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	if err := mkdirModeBeneath(r.project.base, r.rel, taskDirMode); err != nil {
		return err
	}
	return writeBeneath(r.project.base, rel, data, false)
}

// where is the directory WriteWhere recorded for task id (nil: none, or
// not a place).
func (r Records) where(id string) *Dir {
	var chain []string
	if readJSONBeneath(r.project.base, filepath.Join(r.rel, id+whereSuffix), &chain) != nil || len(chain) < 2 || chain[len(chain)-1] != id {
		return nil
	}
	d, err := r.project.Task(chain[0])
	for _, c := range chain[1:] {
		if err != nil {
			return nil
		}
		d, err = d.Child(c)
	}
	if err != nil {
		return nil
	}
	return d
}
