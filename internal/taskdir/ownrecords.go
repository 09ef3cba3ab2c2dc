package taskdir

// The parent's records of its tasks (owner, verdict, kill, calls), in
// .brood/records/ or, for a sandboxed parent, its task directory's owners/.

import (
	"errors"
	"io/fs"
	"path/filepath"
	"strings"
)

// Records is a directory of a parent's own records (owner, verdict, kill)
// about the tasks it dispatched: the root's .brood/records, or a sandboxed
// parent's owners/ in its own task directory.
type Records struct {
	project Project
	rel     string
	own     bool // the project's own records: sealed (RecordKey)
}

// Sealed reports whether the records are the project's own, which a
// repository could ship and which brood therefore seals (RecordKey); a
// sandboxed parent's are in its task directory, beneath a sealed task.
func (r Records) Sealed() bool { return r.own }

// Path is the records directory.
func (r Records) Path() string { return filepath.Join(r.project.base, r.rel) }

// OwnerPath, VerdictPath, KillPath and CallsPath are the files of task id's records.
func (r Records) OwnerPath(id string) string   { return filepath.Join(r.Path(), id+ownerSuffix) }
func (r Records) VerdictPath(id string) string { return filepath.Join(r.Path(), id+verdictSuffix) }
func (r Records) KillPath(id string) string    { return filepath.Join(r.Path(), id+killSuffix) }
func (r Records) CallsPath(id string) string   { return filepath.Join(r.Path(), id+callsSuffix) }

// ReadOwner, ReadVerdict and ReadKill read task id's records into v.
func (r Records) ReadOwner(id string, v any) error   { return r.read(id+ownerSuffix, v) }
func (r Records) ReadVerdict(id string, v any) error { return r.read(id+verdictSuffix, v) }
func (r Records) ReadKill(id string, v any) error    { return r.read(id+killSuffix, v) }

// WriteOwner, WriteVerdict and WriteKill write task id's records (synced,
// tmp+rename, creating the directory).
func (r Records) WriteOwner(id string, v any) error   { return r.write(id+ownerSuffix, v) }
func (r Records) WriteVerdict(id string, v any) error { return r.write(id+verdictSuffix, v) }
func (r Records) WriteKill(id string, v any) error    { return r.write(id+killSuffix, v) }

// ReadCalls reads task id's record of its child's tool calls into v;
// WriteCalls writes it (tmp+rename, not synced: the verdict, which is,
// rests on it, and a run's record lost to a power cut says so as a run
// missing from it).
func (r Records) ReadCalls(id string, v any) error { return r.read(id+callsSuffix, v) }
func (r Records) WriteCalls(id string, v any) error {
	return r.writeSync(id+callsSuffix, v, false)
}

// RemoveAll removes every record of task id.
func (r Records) RemoveAll(id string) {
	for _, s := range []string{ownerSuffix, verdictSuffix, killSuffix, whereSuffix, callsSuffix} {
		_ = removeBeneath(r.project.base, filepath.Join(r.rel, id+s))
	}
}

func (r Records) read(name string, v any) error {
	if err := CheckID(strings.SplitN(name, ".", 2)[0]); err != nil {
		return err
	}
	return readJSONBeneath(r.project.base, filepath.Join(r.rel, name), v)
}

func (r Records) write(name string, v any) error { return r.writeSync(name, v, true) }

func (r Records) writeSync(name string, v any, sync bool) error {
	if err := CheckID(strings.SplitN(name, ".", 2)[0]); err != nil {
		return err
	}
	data, err := encode(name, v)
	if err != nil {
		return err
	}
	rel := filepath.Join(r.rel, name)
	// The directory is made only when it is missing (the first record), not
	// walked from the root before every write.
	err = writeBeneathMode(r.project.base, rel, data, sync, recordMode)
	if !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	if err := mkdirModeBeneath(r.project.base, r.rel, taskDirMode); err != nil {
		return err
	}
	return writeBeneathMode(r.project.base, rel, data, sync, recordMode)
}
