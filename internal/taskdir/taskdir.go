// Package taskdir is the one home of brood's state on disk: the project's
// .brood/ directory, one directory per task under .brood/dispatch/<id>/, and
// the parent's own records under .brood/records/. It owns every path and how
// each record is read and written; nothing else joins ".brood" paths. Open
// decides where the records are: .brood/, or for a project brood cannot
// write, the user's state directory (Fallback).
//
// # The trust boundary
//
// A child is hostile. Everything under its task directory is the child's to
// write — envelope.json (after the parent wrote it), session.jsonl,
// result.json, groups.json, stderr.log, tmp/, inbox/, isolate/, owners/,
// and tasks/: the task directories of a delegating child's own children,
// nested beneath its own (nested.go), so that no child's rules name any
// other task's directory. The parent owns .brood/records/: the owner record
// (<id>.json: which agent, model, privileges, brief), the verdict
// (<id>.verdict.json: accepted, or rejected and why) and the kill record
// (<id>.kill.json: a person stopped it). No sandboxed child can write there.
//
// The rules, held by construction in this package:
//
//   - The parent touches a child-writable path only through Dir's methods,
//     which resolve every name beneath the project with openat2
//     RESOLVE_BENEATH|RESOLVE_NO_SYMLINKS (component-wise O_NOFOLLOW where the
//     kernel lacks openat2): a link the child planted is an error, never
//     followed.
//   - Writes are tmp+rename beneath the directory (renameat replaces a link,
//     never writes through it); a file the parent recreates (stderr.log) is
//     removed before every start and made anew with O_EXCL (on the child's
//     first byte: Lazy); tmp/ is removed before every start and made by the
//     child, and no sandbox rule is built on it.
//   - The task's lock is a flock on its directory (OpenLock): no file is
//     made for it.
//   - What the child wrote is data. The parent never takes a pid, a model, an
//     agent, a privilege, a depth or a final status from it: those come from
//     the owner record, the registry and the parent's own process handles,
//     and the status a listing shows is the verdict's.
//   - A corrupt child-writable file never hides a task: listings fall back to
//     the parent's records and say what is broken.
package taskdir

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync"

	"github.com/oklog/ulid/v2"
	"golang.org/x/sys/unix"
)

// StateDirName is the name of brood's directory in a project.
const StateDirName = ".brood"

// Names inside a task directory (all child-writable once the child runs).
const (
	Envelope = "envelope.json"
	Session  = "session.jsonl"
	Result   = "result.json"
	Output   = "output.json"
	Log      = "dispatch-log.json"
	Stderr   = "stderr.log"
	Groups   = "groups.json"
	Fork     = "fork.json"
	Lock     = ".lock"
	Inbox    = "inbox"
	Tmp      = "tmp"
	Isolate  = "isolate"
	// TreeBefore is the work tree's state as an in-place writer's parent
	// took it before the child started: what the child measures its own
	// account of its changes from, so it need not walk the tree itself.
	TreeBefore = "tree-before.json"
	// Owners holds the owner records and verdicts of a sandboxed parent's
	// own children (it cannot write .brood/records).
	Owners = "owners"
)

// Suffixes of the parent's records in a records directory.
const (
	ownerSuffix   = ".json"
	verdictSuffix = ".verdict.json"
	killSuffix    = ".kill.json"
	callsSuffix   = ".calls.json"
)

// NewID returns a new sortable, unique task id.
func NewID() string { return ulid.Make().String() }

// CheckID refuses anything that is not a task id (a ULID): ids come from
// models and command lines, and must never name a path.
func CheckID(id string) error {
	if _, err := ulid.ParseStrict(id); err != nil || len(id) != ulid.EncodedSize {
		return fmt.Errorf("%q is not a task id (26 letters and digits, as `brood tasks` lists them)", id)
	}
	return nil
}

// Project is the brood state of one project: its records live in
// base/name, which is root/.brood, or the user's state directory
// (Fallback) when the project cannot be written.
type Project struct{ root, base, name string }

// Open returns the state layout of the project rooted at root. It is the
// one place that decides where the records are: the project's .brood/,
// unless Fallback(root) exists (Ensure made it because the project could
// not be written), then there.
func Open(root string) Project {
	p := Project{root: root, base: root, name: StateDirName}
	if fb, err := Fallback(root); err == nil {
		if st, err := os.Lstat(fb); err == nil && st.IsDir() {
			p.base, p.name = filepath.Dir(fb), filepath.Base(fb)
		}
	}
	return p
}

// Root is the project's root directory.
func (p Project) Root() string { return p.root }

// StateDir is where the records are: .brood/, or the fallback directory.
func (p Project) StateDir() string { return filepath.Join(p.base, p.name) }

// Elsewhere reports whether the records are kept outside the project.
func (p Project) Elsewhere() bool { return p.name != StateDirName }

// Notice is the one line to say where the records are when they are not in
// the project; "" when they are.
func (p Project) Notice() string {
	if !p.Elsewhere() {
		return ""
	}
	return fmt.Sprintf("brood: %s cannot be written; its records are kept in %s", p.root, p.StateDir())
}

// DispatchRoot is where task directories live.
func (p Project) DispatchRoot() string { return filepath.Join(p.StateDir(), "dispatch") }

// RecordsDir is where the root keeps its owner records, verdicts and kill
// records: out of every sandboxed child's reach.
func (p Project) RecordsDir() string { return filepath.Join(p.StateDir(), "records") }

// SessionsDir holds the root's transcripts.
func (p Project) SessionsDir() string { return filepath.Join(p.StateDir(), "sessions") }

// OutputsDir holds the root's spilled tool outputs.
func (p Project) OutputsDir() string { return filepath.Join(p.StateDir(), "outputs") }

// WorkflowsDir holds workflow runs.
func (p Project) WorkflowsDir() string { return filepath.Join(p.StateDir(), "workflows") }

// DebugLog is the [DISPATCH] debug log.
func (p Project) DebugLog() string { return filepath.Join(p.StateDir(), "brood-debug.log") }

// Settings is the project's committed settings file.
func (p Project) Settings() string { return filepath.Join(p.root, StateDirName, "settings.toml") }

// Agents is the project's agent definitions directory.
func (p Project) Agents() string { return filepath.Join(p.root, StateDirName, "agents") }

// Ensure creates .brood/ with its .gitignore if missing. When the project
// (or its .brood/) cannot be written — a read-only checkout or mount, a
// directory owned by someone else — it makes Fallback(root) instead, and
// every later Open of the project keeps its records there.
func (p Project) Ensure() error { return p.ensure(false) }

// EnsureWritable is Ensure that also proves .brood/ writable with a probe
// file (not mode bits: root passes every mode check, not a read-only
// mount). The root calls it once at the start of a run; a sandboxed child
// never does (its .brood/ is read-only by design). The project is then
// on the known projects' list (Remember), so that other projects'
// children do not read its records; a list that cannot be written is no
// error of the run's (a sandboxed child's call fails before it).
func (p Project) EnsureWritable() error {
	if err := p.ensure(true); err != nil {
		return err
	}
	_ = Open(p.root).Remember()
	return nil
}

func (p Project) ensure(probe bool) error {
	if p.Elsewhere() {
		return os.MkdirAll(p.StateDir(), 0o700)
	}
	err := p.ensureHere(probe)
	if err == nil || !unwritable(err) {
		return err
	}
	fb, ferr := Fallback(p.root)
	if ferr != nil {
		return fmt.Errorf("%w (and no state directory to keep records in: %v)", err, ferr)
	}
	if ferr := os.MkdirAll(fb, 0o700); ferr != nil {
		return fmt.Errorf("%w (and %v)", err, ferr)
	}
	return nil
}

func (p Project) ensureHere(probe bool) error {
	if err := mkdirBeneath(p.root, StateDirName); err != nil {
		return err
	}
	if err := ensureIgnore(p.root); err != nil {
		return err
	}
	// .brood opened once, without following a link, for the checks below
	// (each opened the project and .brood again before).
	rfd, err := openRoot(p.root)
	if err != nil {
		return err
	}
	sfd, err := openAt(rfd, StateDirName, unix.O_PATH|unix.O_DIRECTORY, 0)
	unix.Close(rfd)
	if err != nil {
		return pathErr("open", filepath.Join(p.root, StateDirName), err)
	}
	defer unix.Close(sfd)
	if err := noLinkedRecords(p.root, sfd); err != nil {
		return err
	}
	if !probe {
		return nil
	}
	return probeWrite(p.root, sfd)
}

// probeWrite proves .brood (sfd) writable: a fresh file made in it and
// removed.
func probeWrite(root string, sfd int) error {
	name := ".probe-" + NewID()
	full := filepath.Join(root, StateDirName, name)
	flags := unix.O_WRONLY | unix.O_CREAT | unix.O_EXCL | unix.O_NOFOLLOW | unix.O_CLOEXEC
	fd, err := unix.Openat(sfd, name, flags, 0o644)
	if err == unix.EEXIST { // whatever is there is not brood's: it goes
		if err = removeAt(sfd, name); err == nil {
			fd, err = unix.Openat(sfd, name, flags, 0o644)
		}
	}
	if err != nil {
		return pathErr("create", full, err)
	}
	unix.Close(fd)
	if err := removeAt(sfd, name); err != nil {
		return pathErr("remove", full, err)
	}
	return nil
}

func unwritable(err error) bool {
	return errors.Is(err, unix.EACCES) || errors.Is(err, unix.EROFS) || errors.Is(err, unix.EPERM) || errors.Is(err, fs.ErrPermission)
}

// Fallback is where the records of the project at root are kept when the
// project cannot be written: $XDG_STATE_HOME/brood/projects/<name>-<hash>
// (~/.local/state/... by default), hash a short sha256 of the absolute path.
func Fallback(root string) (string, error) {
	abs, err := filepath.Abs(root)
	if err != nil {
		return "", err
	}
	base := os.Getenv("XDG_STATE_HOME")
	if !filepath.IsAbs(base) {
		home, err := os.UserHomeDir()
		if err != nil {
			return "", err
		}
		base = filepath.Join(home, ".local", "state")
	}
	sum := sha256.Sum256([]byte(abs))
	return filepath.Join(base, "brood", "projects", filepath.Base(abs)+"-"+hex.EncodeToString(sum[:6])), nil
}

// Task is one task's directory (the id is checked: it never names a path).
func (p Project) Task(id string) (*Dir, error) {
	if err := CheckID(id); err != nil {
		return nil, err
	}
	return &Dir{project: p, id: id, rel: filepath.Join(p.name, "dispatch", id)}, nil
}

// MustTask is Task for ids this process made.
func (p Project) MustTask(id string) *Dir {
	d, err := p.Task(id)
	if err != nil {
		panic(err)
	}
	return d
}

// TaskIDs lists every task's id, top-level and nested (Tasks), newest
// first.
func (p Project) TaskIDs() ([]string, error) {
	ds, err := p.Tasks()
	ids := make([]string, 0, len(ds))
	for _, d := range ds {
		ids = append(ids, d.id)
	}
	return ids, err
}

// Records is the root's records directory.
func (p Project) Records() Records {
	return Records{project: p, rel: filepath.Join(p.name, "records"), own: true}
}

// Dir is one task's directory. Its methods are the only way the parent
// reads or writes there, and none follows a link.
type Dir struct {
	project Project
	id      string
	rel     string // beneath the project root
}

// ID is the task's id.
func (d *Dir) ID() string { return d.id }

// Path is the directory's absolute path (for display and for the child).
func (d *Dir) Path() string { return filepath.Join(d.project.base, d.rel) }

// Project is the project the task belongs to.
func (d *Dir) Project() Project { return d.project }

// File is the path of name inside the directory (for display, for the
// child's own use and for handing to code that runs as the child).
func (d *Dir) File(name string) string { return filepath.Join(d.Path(), name) }

// Create makes the directory (and .brood/dispatch) without following links.
// Where .brood/dispatch is there already (every task but a project's
// first), that is one mkdirat beneath it, not a walk from the root.
func (d *Dir) Create() error {
	if d.Nested() {
		return d.createNested()
	}
	err := mkdirLeafBeneath(d.project.base, d.rel, taskDirMode)
	if !errors.Is(err, fs.ErrNotExist) && !unwritable(err) {
		return err
	}
	if err := d.project.Ensure(); err != nil {
		return err
	}
	err = mkdirModeBeneath(d.project.base, d.rel, taskDirMode)
	if err == nil || !unwritable(err) || d.project.Elsewhere() || d.project.root == "" {
		return err
	}
	// Refused: probe, and move the records if the project cannot be
	// written. (A sandboxed child is refused the same way, but cannot make
	// the state directory either: then this fails as before.)
	if perr := d.project.EnsureWritable(); perr != nil {
		return perr
	}
	q := Open(d.project.root)
	if q == d.project {
		return err
	}
	d.project, d.rel = q, filepath.Join(q.name, "dispatch", d.id)
	return mkdirBeneath(d.project.base, d.rel)
}

// Exists reports whether the task directory is there (a real directory).
func (d *Dir) Exists() bool {
	st, err := lstatBeneath(d.project.base, d.rel)
	return err == nil && st.IsDir()
}

// ReadJSON reads a record without following links; see ReadFile.
func (d *Dir) ReadJSON(name string, v any) error {
	return readJSONBeneath(d.project.base, filepath.Join(d.rel, name), v)
}

// ReadJSONBytes is ReadJSON that also returns the bytes it read (nil when
// none could be read; the bytes of a record that does not parse, with the
// *ParseError), for a caller that keeps a hash of exactly what it judged.
func (d *Dir) ReadJSONBytes(name string, v any) ([]byte, error) {
	rel := filepath.Join(d.rel, name)
	data, err := readBeneath(d.project.base, rel, 0)
	if err != nil {
		return nil, err
	}
	if err := json.Unmarshal(data, v); err != nil {
		return data, &ParseError{Path: filepath.Join(d.project.base, rel), Err: err}
	}
	return data, nil
}

// ReadFile reads a regular file of at most max bytes (0: 64 MiB) beneath the
// directory. A link anywhere on the way, or anything but a regular file, is
// an error naming the file.
func (d *Dir) ReadFile(name string, max int64) ([]byte, error) {
	return readBeneath(d.project.base, filepath.Join(d.rel, name), max)
}

// OpenRead opens a regular file beneath the directory for reading, as
// ReadFile does (no link on the way, nothing but a regular file, never
// blocking on a FIFO), for a record too large to read whole: the caller
// bounds what it reads.
func (d *Dir) OpenRead(name string) (*os.File, error) {
	return openRegularBeneath(d.project.base, filepath.Join(d.rel, name))
}

// WriteJSON writes a record tmp+rename beneath the directory; sync says
// whether it is fsynced first (results and envelopes are, diagnostics not).
func (d *Dir) WriteJSON(name string, v any, sync bool) error {
	data, err := encode(name, v)
	if err != nil {
		return err
	}
	return writeBeneathMode(d.project.base, filepath.Join(d.rel, name), data, sync, recordMode)
}

// WriteFile writes data tmp+rename beneath the directory.
func (d *Dir) WriteFile(name string, data []byte, sync bool) error {
	return writeBeneathMode(d.project.base, filepath.Join(d.rel, name), data, sync, recordMode)
}

// CreateFresh unlinks whatever is at name (a link is removed, never
// followed) and creates a new empty file there with O_EXCL.
func (d *Dir) CreateFresh(name string) (*os.File, error) {
	return createFreshBeneath(d.project.base, filepath.Join(d.rel, name))
}

// FreshDir removes whatever is at name (a link, a file, or a directory and
// what the child left in it) and makes a new, empty, real directory there.
// Hand only such a directory to a sandbox rule.
func (d *Dir) FreshDir(name string, perm os.FileMode) (string, error) {
	rel := filepath.Join(d.rel, name)
	if err := removeBeneath(d.project.base, rel); err != nil {
		return "", err
	}
	if err := mkdirModeBeneath(d.project.base, rel, perm); err != nil {
		return "", err
	}
	return filepath.Join(d.project.base, rel), nil
}

// RemoveEntry removes whatever is at name (a link itself, never its
// target; a file; a directory and what the child left in it). Removing
// what is not there is no error.
func (d *Dir) RemoveEntry(name string) error {
	return removeBeneath(d.project.base, filepath.Join(d.rel, name))
}

// MkdirAll makes name (and its parents) beneath the directory.
func (d *Dir) MkdirAll(name string) error {
	return mkdirBeneath(d.project.base, filepath.Join(d.rel, name))
}

// Rename renames old to new beneath the directory (neither followed).
func (d *Dir) Rename(old, new string) error {
	return renameBeneath(d.project.base, filepath.Join(d.rel, old), filepath.Join(d.rel, new))
}

// Has reports whether name exists beneath the directory (a link counts as
// there: it is not followed).
func (d *Dir) Has(name string) bool {
	_, err := lstatBeneath(d.project.base, filepath.Join(d.rel, name))
	return err == nil
}

// Remove removes the whole task directory (links inside are removed, not
// followed).
func (d *Dir) Remove() error { return removeBeneath(d.project.base, d.rel) }

// Owners is the records directory in which this task, as a sandboxed
// parent, keeps its own children's records.
func (d *Dir) Owners() Records {
	return Records{project: d.project, rel: filepath.Join(d.rel, Owners)}
}

// FromPath is the task directory at path, which must be
// <project>/.brood/dispatch/<id>, or nested beneath such a task
// (<id>/tasks/<child id>/...).
func FromPath(path string) (*Dir, error) {
	disp, rel, ok := SplitTaskPath(path)
	if !ok {
		return nil, fmt.Errorf("%s is not a task directory (<project>/.brood/dispatch/<id>)", path)
	}
	state := filepath.Dir(disp)
	var p Project
	switch {
	case filepath.Base(state) == StateDirName:
		p = Open(filepath.Dir(state))
	case filepath.Base(filepath.Dir(state)) == "projects":
		// A project kept in the state directory: <fallback>/dispatch/<id>.
		p = Project{base: filepath.Dir(state), name: filepath.Base(state)}
	default:
		return nil, fmt.Errorf("%s is not a task directory (<project>/.brood/dispatch/<id>)", path)
	}
	ids := strings.Split(rel, string(filepath.Separator)+Tasks+string(filepath.Separator))
	d, err := p.Task(ids[0])
	for _, id := range ids[1:] {
		if err != nil {
			break
		}
		d, err = d.Child(id)
	}
	return d, err
}

// OpenLock opens what a task's owner holds its flock on: the task
// directory itself, so that no file is created for the lock. It is opened
// beneath the project without following a link.
func (d *Dir) OpenLock() (*os.File, error) {
	return openFileBeneath(d.project.base, d.rel, unix.O_RDONLY|unix.O_DIRECTORY, 0)
}

// OpenLegacyLock opens the .lock file an older brood held its flock on, if
// the task has one (fs.ErrNotExist if not), without following a link and
// without blocking: a child can make its .lock a FIFO, whose open would
// wait for a writer forever. Anything but a regular file is ErrNotRegular.
func (d *Dir) OpenLegacyLock() (*os.File, error) {
	return openRegularBeneath(d.project.base, filepath.Join(d.rel, Lock))
}

// Lazy is a file beneath a task directory that is made (fresh: whatever
// is at its name is removed, never followed, and the file created with
// O_EXCL) on its first write, so a record most runs leave empty costs no
// inode. A write never fails: what cannot be written is dropped and Err
// says why (it is fed from a child's pipe, which must keep draining).
type Lazy struct {
	d    *Dir
	name string
	mu   sync.Mutex
	f    *os.File
	err  error
}

// Lazy returns the lazily made file name beneath the directory.
func (d *Dir) Lazy(name string) *Lazy { return &Lazy{d: d, name: name} }

func (l *Lazy) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.f == nil && l.err == nil {
		l.f, l.err = l.d.CreateFresh(l.name)
	}
	if l.f != nil && l.err == nil {
		_, l.err = l.f.Write(p)
	}
	return len(p), nil
}

// Err is the first error making or writing the file.
func (l *Lazy) Err() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.err
}

// Close closes the file if it was made.
func (l *Lazy) Close() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.f == nil {
		return nil
	}
	err := l.f.Close()
	l.f = nil
	if l.err == nil {
		l.err = os.ErrClosed
	}
	return err
}

// noLinkedRecords refuses a .brood/ whose record directories (or debug
// log) are symbolic links: a repository can commit one, and brood would
// write your transcripts and run records wherever it points.
// sfd is .brood, opened without following a link.
func noLinkedRecords(root string, sfd int) error {
	// The names under .brood/ brood writes its records to by path.
	for _, name := range []string{"sessions", "workflows", "outputs", "fleet", "records", "dispatch", "brood-debug.log"} {
		var st unix.Stat_t
		if err := unix.Fstatat(sfd, name, &st, unix.AT_SYMLINK_NOFOLLOW); err != nil || st.Mode&unix.S_IFMT != unix.S_IFLNK {
			continue
		}
		return fmt.Errorf("%s is a symbolic link (brood never writes its records through a link; a repository may have shipped it): remove it", filepath.Join(root, StateDirName, name))
	}
	return nil
}
