package isolate

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"

	"github.com/broodhq/brood/internal/gitx"
	"github.com/broodhq/brood/internal/sandbox"
)

// EnterFromEnv is the child's side of isolation. The brood binary (and any
// test binary that stands in for it) must call it first thing in main,
// before flag parsing and before sandbox.Restrict, because it may change the
// process's view of the file system and its working directory:
//
//   - overlay: it makes mounts private, mounts the overlay over the tree's
//     own path, bind-mounts the child's state directory back over itself
//     (so result.json and the transcript reach the parent, not the upper
//     layer), and re-enters the working directory so it is on the overlay.
//   - worktree: nothing to mount; it reports the copy's root.
//   - inplace (an in-place writer): it binds the work tree's configuration
//     read-only over itself (View), and returns Mode none.
//   - overlay and inplace, for a child that does not delegate: the
//     dispatch directory is covered but for its own task directory
//     (coverTasks: the other tasks' are in its tree).
//   - readonly (a read-only child): it makes every mount read-only but its
//     own directories (ConfigureReadOnly), and returns Mode none.
//   - probe (started by Probe): it tries an overlay mount in a scratch
//     directory, prints the outcome and exits; it does not return.
//
// Without the environment variable it returns Mode none and does nothing.
// Mounts are per process (the namespace was chosen at clone), so Go's
// threads are not a concern here.
func EnterFromEnv() (Entered, error) {
	// A child that is its PID namespace's init reaps the orphans handed
	// to it (every command's `(cmd &)`), once its view is built.
	defer sandbox.ReapOrphans()
	if e, ok := reentered(); ok {
		return e, nil
	}
	// The init of a PID namespace of its own sees its own processes only
	// (pool: under every containment), before any view below is built.
	if err := sandbox.MountOwnProc(); err != nil {
		fmt.Fprintf(os.Stderr, "brood: %v: this child sees the host's /proc (every process's command line)\n", err)
	}
	// A writer's Go caches (goLayer) are mounted in a view of its own
	// (whose mounts are private), never where it has none.
	golayers := takeGoLayers()
	v, ok, err := sandbox.TakeEnv(envVar)
	if err != nil {
		return Entered{}, fmt.Errorf("isolate: %w", err)
	}
	if !ok {
		return Entered{Mode: ModeNone}, nil
	}
	var spec mountSpec
	if err := json.Unmarshal([]byte(v), &spec); err != nil {
		return Entered{}, fmt.Errorf("isolate: bad %s: %w", envVar, err)
	}
	// (Only this process's own mounts grant a write rule.)
	os.Unsetenv(goMountedVar)
	e, err := enter(spec, golayers)
	if err != nil {
		return e, err
	}
	// What it was given to mount with ends with its mounts, before
	// anything of its task runs, confined or not.
	if err := dropMountCaps(); err != nil {
		return Entered{}, err
	}
	return e, nil
}

// enter makes the mounts of spec (and the writer's Go caches, golayers)
// in the child's own mount namespace.
func enter(spec mountSpec, golayers []goLayer) (Entered, error) {
	switch spec.Mode {
	case modeProbe:
		os.Exit(runProbeChild(spec.Root))
	case ModeWorktree:
		// A writer that writes its copy's git directory: what says where
		// the repository is and how it is configured is held read-only
		// (Workspace.HoldGit).
		if len(spec.RO) > 0 || len(spec.Denied) > 0 {
			if err := bindView(View{ReadOnly: spec.RO, Denied: spec.Denied, Within: []string{spec.Root}, Writes: spec.Writes}); err != nil {
				return Entered{}, err
			}
			mountGoLayers(golayers)
		}
		return remember(Entered{Mode: ModeWorktree, Root: spec.Root}), nil
	case modeInPlace:
		if err := bindView(View{ReadOnly: spec.RO, Writable: spec.RW, Tasks: spec.Tasks, Own: spec.Own, Covered: spec.Covered, Denied: spec.Denied, Within: spec.Within, Writes: spec.Writes}); err != nil {
			return Entered{}, err
		}
		mountGoLayers(golayers)
		return Entered{Mode: ModeNone}, nil
	case modeReadOnly:
		if err := enterReadOnly(spec.RW); err != nil {
			return Entered{}, err
		}
		return Entered{Mode: ModeNone}, nil
	case ModeOverlay:
		if err := mountOverlay(spec); err != nil {
			return Entered{}, &MountError{Err: err}
		}
		mountGoLayers(golayers)
		return remember(Entered{Mode: ModeOverlay, Root: spec.Root}), nil
	}
	return Entered{}, fmt.Errorf("isolate: unknown mode %q in %s", spec.Mode, envVar)
}

func mountOverlay(spec mountSpec) error {
	// Nothing we mount may propagate back to the parent's namespace.
	if err := unix.Mount("none", "/", "", unix.MS_REC|unix.MS_PRIVATE, ""); err != nil {
		return fmt.Errorf("isolate: make mounts private: %w", err)
	}
	// Every mount but what it writes read-only, first: its task
	// directory is then bound into the copy from its writable bind.
	layers, err := overlayLayers(spec)
	if err != nil {
		return err
	}
	if err := writeOnly(overlayWrites(spec, layers)); err != nil {
		return err
	}
	type kept struct {
		fd   int
		path string
	}
	var keep []kept
	for _, k := range spec.Keep {
		if !within(spec.Root, k) {
			continue // outside the overlay: already the real directory
		}
		fd, err := unix.Open(k, unix.O_PATH|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
		if err != nil {
			return fmt.Errorf("isolate: open state dir %s: %w", k, err)
		}
		keep = append(keep, kept{fd, k})
	}
	opts, err := overlayOptions(spec.Root, spec.Upper, spec.Work, spec.UserXattr)
	if err != nil {
		return err
	}
	// The workdir is in the task directory, under the tree the overlay
	// covers: it is reached after the mount through what was opened
	// before it, never through the overlay (whose copy it would change).
	wfd, err := unix.Open(spec.Work, unix.O_PATH|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return fmt.Errorf("isolate: open the overlay's workdir %s: %w", spec.Work, err)
	}
	defer unix.Close(wfd)
	if err := unix.Mount("overlay", spec.Root, "overlay", 0, opts); err != nil {
		return fmt.Errorf("isolate: mount overlay on %s: %w", spec.Root, err)
	}
	openWorkAt(wfd)
	if err := readOnlyAgain(layers); err != nil {
		return err
	}
	// A covered path stays where it is: no directory above it in the
	// copy can be renamed (pinAncestors).
	if err := pinAncestors(slices.Concat(spec.Covered, spec.Denied), []string{spec.Root}); err != nil {
		return err
	}
	if err := coverEmpty(spec.Covered); err != nil {
		return err
	}
	if err := coverDenied(spec.Denied); err != nil {
		return err
	}
	if spec.Tasks != "" {
		i := slices.IndexFunc(keep, func(k kept) bool { return k.path == spec.Own })
		if i < 0 {
			return fmt.Errorf("isolate: %s covers the other tasks but keeps no own task directory %s", envVar, spec.Own)
		}
		if err := coverTasks(spec.Tasks, spec.Own, keep[i].fd); err != nil {
			return err
		}
		unix.Close(keep[i].fd)
		keep = slices.Delete(keep, i, i+1)
	}
	for _, k := range keep {
		src := "/proc/self/fd/" + strconv.Itoa(k.fd)
		if err := unix.Mount(src, k.path, "", unix.MS_BIND|unix.MS_REC, ""); err != nil {
			return fmt.Errorf("isolate: bind state dir %s into the overlay: %w", k.path, err)
		}
		unix.Close(k.fd)
	}
	// Its upper and work directories, in its task directory, are out of
	// its reach: removing a whiteout there would show it the tree's
	// ignored file beneath (redteam21 P1-5).
	if err := coverEmpty(spec.Private); err != nil {
		return err
	}
	// The old working directory is the lower layer's inode; entering it
	// again by path lands on the overlay.
	cwd := spec.Cwd
	if cwd == "" {
		cwd = spec.Root
	}
	if err := os.Chdir(cwd); err != nil {
		return fmt.Errorf("isolate: enter %s on the overlay: %w", cwd, err)
	}
	return nil
}

// overlayWrites are the directories an overlay child writes outside its
// copy (the copy is a mount of its own, writable): spec.Writes beyond
// the tree, and the directories it keeps writing through to the real
// tree (its task directory among them).
func overlayWrites(spec mountSpec, layers string) []string {
	if len(spec.Writes) == 0 {
		return nil
	}
	out := slices.DeleteFunc(slices.Clone(spec.Writes), func(p string) bool { return within(spec.Root, p) })
	if layers != "" {
		out = append(out, layers)
	}
	return append(out, spec.Keep...)
}

// overlayLayers is the directory holding the overlay's upper and work
// directories where no directory the child writes holds them (a fleet
// worker's job directory: Mount), "" otherwise: they must be on one
// writable mount when the overlay is mounted, and that mount is made
// read-only again right after (readOnlyAgain) — the overlay keeps its own
// private copy of it, writable. It may hold neither the copy nor what
// the child writes.
func overlayLayers(spec mountSpec) (string, error) {
	if len(spec.Writes) == 0 || spec.Upper == "" {
		return "", nil
	}
	up, work := filepath.Clean(spec.Upper), filepath.Clean(spec.Work)
	writes := slices.Concat(spec.Writes, spec.Keep)
	if slices.ContainsFunc(writes, func(w string) bool { return within(w, up) && within(w, work) }) {
		return "", nil
	}
	d := up
	for !within(d, work) {
		d = filepath.Dir(d)
	}
	for _, w := range append(writes, spec.Root) {
		if within(d, w) {
			return "", fmt.Errorf("isolate: the overlay's upper and work directories' parent %s holds %s, which the child writes: put them in a directory of their own", d, w)
		}
	}
	return d, nil
}

// readOnlyAgain makes layers' mounts read-only once the overlay is
// mounted.
func readOnlyAgain(layers string) error {
	if layers == "" {
		return nil
	}
	fd, err := openNoLinks(layers)
	if err != nil {
		return fmt.Errorf("isolate: open the overlay's layers %s: %w", layers, err)
	}
	defer unix.Close(fd)
	ro := unix.MountAttr{Attr_set: unix.MOUNT_ATTR_RDONLY}
	if err := unix.MountSetattr(fd, "", unix.AT_EMPTY_PATH|unix.AT_RECURSIVE, &ro); err != nil {
		return fmt.Errorf("isolate: make the overlay's layers %s read-only again: %w", layers, err)
	}
	return nil
}

// overlayOptions is the overlay's mount data for these layers. Each path
// is escaped as overlayfs reads it: a backslash takes the next character
// as it is, so a ',' (the options' separator), a ':' (lowerdir's) or a
// '\\' in a path is one of the path's characters. overlayfs has read its
// options so since it was merged (3.18: ovl_next_opt, ovl_unescape for
// lowerdir, upperdir and workdir), well below the kernels brood runs on.
// The kernel takes at most a page of mount data: longer options are an
// error here (the child then exits ExitMountFailed and its parent falls
// back to a worktree copy), never a mount of a cut path.
func overlayOptions(lower, upper, work string, userxattr bool) (string, error) {
	opts := "lowerdir=" + escapeOverlayPath(lower) + ",upperdir=" + escapeOverlayPath(upper) + ",workdir=" + escapeOverlayPath(work)
	if userxattr {
		opts += ",userxattr"
	}
	if len(opts) >= os.Getpagesize() {
		return "", fmt.Errorf("isolate: the overlay's options for %s are %d bytes, more than the kernel takes (%d): the paths are too long", lower, len(opts), os.Getpagesize()-1)
	}
	return opts, nil
}

// openWork gives the user back the "work" directory overlayfs made mode 0
// in workdir work when it mounted (the mounter works in it with
// CAP_DAC_OVERRIDE): what it leaves there (a whiteout, a child killed
// mid-copy) would otherwise keep a user other than root from removing the
// task's directories. Where it cannot, the mount stands as it is.
func openWork(work string) {
	_ = unix.Fchmodat(unix.AT_FDCWD, filepath.Join(work, "work"), 0o700, 0)
}

// openWorkAt is openWork for the workdir open at wfd.
func openWorkAt(wfd int) {
	_ = unix.Fchmodat(wfd, "work", 0o700, 0)
}

// escapeOverlayPath puts a backslash before each ',', ':' and '\\' of p.
func escapeOverlayPath(p string) string {
	if !strings.ContainsAny(p, ",:\\") {
		return p
	}
	b := make([]byte, 0, len(p)+8)
	for i := range len(p) {
		if c := p[i]; c == ',' || c == ':' || c == '\\' {
			b = append(b, '\\')
		}
		b = append(b, p[i])
	}
	return string(b)
}

func within(root, p string) bool {
	rel, err := filepath.Rel(root, p)
	return err == nil && rel != ".." && !strings.HasPrefix(rel, "../")
}

// probeResult is what a probe child prints on stdout.
type probeResult struct {
	OK        bool   `json:"ok"`
	UserXattr bool   `json:"userxattr"`
	Err       string `json:"err,omitempty"`
}

// dropMountCaps empties a non-root child's capabilities (mountCaps, held
// in its own user namespace: ambient, inheritable, permitted and
// effective) on every thread once its mounts are made, so that none
// reaches a command of its task, whether or not a sandbox follows
// (sandbox.Restrict empties them too; isolation.no_landlock skips it).
// Root's are sandbox.Restrict's to cut (it keeps some). In a binary with
// cgo, whose threads it cannot all reach, it leaves them to Restrict's
// re-exec, which starts the confined image with none.
func dropMountCaps() error {
	if os.Geteuid() == 0 || !sandbox.InPlace() {
		return nil
	}
	hdr := unix.CapUserHeader{Version: unix.LINUX_CAPABILITY_VERSION_3}
	var none [2]unix.CapUserData
	_, _, e := syscall.AllThreadsSyscall(unix.SYS_CAPSET, uintptr(unsafe.Pointer(&hdr)), uintptr(unsafe.Pointer(&none[0])), 0)
	runtime.KeepAlive(&hdr)
	runtime.KeepAlive(&none)
	if e != 0 {
		return fmt.Errorf("isolate: drop the capabilities the child mounted with: %w", e)
	}
	return nil
}

// mountCaps are the capabilities a non-root child keeps (ambient) in its
// own user namespace so it can mount: CAP_SYS_ADMIN for mount(2), and
// CAP_DAC_OVERRIDE for overlayfs, which makes its workdir's "work"
// directory mode 0 and then works in it with the mounter's credentials
// (without it every overlay mount is EACCES). In a user namespace that
// maps only the user's own uid and gid, CAP_DAC_OVERRIDE reaches only the
// user's own files; both leave the child with the rest of its
// capabilities when it is confined (sandbox.Restrict: ambient and
// inheritable sets cleared, permitted and effective emptied).
func mountCaps() []uintptr { return []uintptr{unix.CAP_SYS_ADMIN, unix.CAP_DAC_OVERRIDE} }

// addMountNamespace asks for the child to be created in new user and mount
// namespaces, keeping mountCaps for a non-root user so it can mount.
func addMountNamespace(cmd *exec.Cmd) error {
	sandbox.AddNamespaces(cmd, syscall.CLONE_NEWUSER|syscall.CLONE_NEWNS, mountCaps())
	return nil
}

// runProbeChild mounts an overlay in dir (l, u, w, m made by the parent),
// first with userxattr, then without, and checks that a write lands in the
// upper layer and a deletion becomes a whiteout there.
func runProbeChild(dir string) int {
	res := probeResult{}
	var errs []string
	for _, ux := range []bool{true, false} {
		opts, err := overlayOptions(dir+"/l", dir+"/u", dir+"/w", ux)
		if err == nil {
			err = unix.Mount("overlay", dir+"/m", "overlay", 0, opts)
		}
		if err != nil {
			errs = append(errs, fmt.Sprintf("mount (userxattr=%v): %v", ux, err))
			continue
		}
		openWork(dir + "/w")
		err = os.WriteFile(dir+"/m/new", []byte("x"), 0o600)
		if err == nil {
			err = os.Remove(dir + "/m/old")
		}
		var st unix.Stat_t
		if err == nil {
			err = unix.Lstat(dir+"/u/old", &st)
			if err == nil && (st.Mode&unix.S_IFMT != unix.S_IFCHR || st.Rdev != 0) {
				err = fmt.Errorf("deletion did not leave a whiteout")
			}
		}
		unix.Unmount(dir+"/m", unix.MNT_DETACH)
		if err != nil {
			errs = append(errs, err.Error())
			continue
		}
		res = probeResult{OK: true, UserXattr: ux}
		break
	}
	if !res.OK {
		res.Err = strings.Join(errs, "; ")
	}
	b, _ := json.Marshal(res)
	fmt.Println(string(b))
	return 0
}

// Probe finds what this machine offers for isolation. The overlay check
// re-executes the running binary (os.Executable) in a new user and mount
// namespace with argv [exe -test.run=^$] and a probe request in the
// environment; the binary must call EnterFromEnv before parsing flags (the
// -test.run argument keeps a test binary that forgot from running its
// tests, and makes any other binary fail, which counts as "no overlay").
func Probe(ctx context.Context) Support {
	s := Support{}
	if v, err := gitx.Version(ctx); err == nil {
		s.Git = v
		s.Worktree = true
	}
	ok, ux, why := probeOverlayIn(ctx, "")
	s.Overlay, s.UserXattr, s.Why = ok, ux, why
	return s
}

// probeOverlayIn tries the overlay in a scratch directory under base (""
// is the temporary directory).
func probeOverlayIn(ctx context.Context, base string) (ok, userxattr bool, why string) {
	exe, err := os.Executable()
	if err != nil {
		return false, false, "cannot find own executable: " + err.Error()
	}
	dir, err := os.MkdirTemp(base, "brood-overlay-probe-")
	if err != nil {
		return false, false, err.Error()
	}
	defer os.RemoveAll(dir)
	for _, d := range []string{"l", "u", "w", "m"} {
		if err := os.Mkdir(filepath.Join(dir, d), 0o700); err != nil {
			return false, false, err.Error()
		}
	}
	if err := os.WriteFile(filepath.Join(dir, "l", "old"), []byte("x"), 0o600); err != nil {
		return false, false, err.Error()
	}
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, exe, "-test.run=^$")
	cmd.Env = append(os.Environ(), envVar+"="+mountSpec{Mode: modeProbe, Root: dir}.encode())
	sandbox.AddNamespaces(cmd, syscall.CLONE_NEWUSER|syscall.CLONE_NEWNS, mountCaps())
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		return false, false, fmt.Sprintf("start probe in user+mount namespace: %v %s", err, strings.TrimSpace(stderr.String()))
	}
	var res probeResult
	line, _, _ := bytes.Cut(stdout.Bytes(), []byte("\n"))
	if err := json.Unmarshal(line, &res); err != nil {
		return false, false, "probe child did not answer (does main call isolate.EnterFromEnv first?)"
	}
	return res.OK, res.UserXattr, res.Err
}
