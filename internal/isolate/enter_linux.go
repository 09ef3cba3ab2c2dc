package isolate

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

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
	if e, ok := reentered(); ok {
		return e, nil
	}
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
		}
		return remember(Entered{Mode: ModeWorktree, Root: spec.Root}), nil
	case modeInPlace:
		if err := bindView(View{ReadOnly: spec.RO, Writable: spec.RW, Tasks: spec.Tasks, Own: spec.Own, Covered: spec.Covered, Denied: spec.Denied, Within: spec.Within, Writes: spec.Writes}); err != nil {
			return Entered{}, err
		}
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
	if err := unix.Mount("overlay", spec.Root, "overlay", 0, opts); err != nil {
		return fmt.Errorf("isolate: mount overlay on %s: %w", spec.Root, err)
	}
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

// capSysAdmin is CAP_SYS_ADMIN, needed to mount inside the user namespace.
const capSysAdmin = 21

// addMountNamespace asks for the child to be created in new user and mount
// namespaces, keeping CAP_SYS_ADMIN for a non-root user so it can mount.
func addMountNamespace(cmd *exec.Cmd) error {
	sandbox.AddNamespaces(cmd, syscall.CLONE_NEWUSER|syscall.CLONE_NEWNS, []uintptr{capSysAdmin})
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
	sandbox.AddNamespaces(cmd, syscall.CLONE_NEWUSER|syscall.CLONE_NEWNS, []uintptr{capSysAdmin})
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
