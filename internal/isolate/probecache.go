package isolate

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"time"

	"golang.org/x/sys/unix"
)

// probeCacheTTL bounds how long a cached probe is believed: a sysctl or an
// AppArmor profile can change what an unprivileged user may mount without
// a new kernel or binary.
const probeCacheTTL = 24 * time.Hour

// ExitMountFailed is the exit status of a child whose overlay could not be
// mounted (EnterFromEnv's MountError), before it ran anything: its parent
// may then give it a worktree copy instead (Isolator.OverlayFailed).
const ExitMountFailed = 75

// MountError is EnterFromEnv's error when the overlay itself could not be
// set up.
type MountError struct{ Err error }

func (e *MountError) Error() string { return e.Err.Error() }
func (e *MountError) Unwrap() error { return e.Err }

// ExitCode is the exit status a main should end with after EnterFromEnv
// failed with err.
func ExitCode(err error) int {
	var me *MountError
	if errors.As(err, &me) {
		return ExitMountFailed
	}
	return 1
}

// probeCache is the file a probe's answer is kept in between brood
// processes, so a short `brood run` does not start a probe process.
//
// It is not trusted: any process of the user can write it, an in-place
// writer child included. A wrong answer can only cost speed. A stale or
// forged "overlay works" makes the first overlay child fail its mount
// before it runs anything (ExitMountFailed); the parent then gives that
// child, and every later one, a worktree copy, and rewrites the file
// (OverlayFailed). A stale or forged "no overlay" gives worktree copies,
// which are slower, until the entry ages out or the kernel or the binary
// changes. The mount parameters never come from it, only the two booleans
// and the git version.
type probeCache struct {
	path string
	key  string
}

type probeEntry struct {
	Key     string    `json:"key"`
	At      time.Time `json:"at"`
	Support Support   `json:"support"`
}

// newProbeCache keys the cache by what decides the answer: the kernel
// (release and build), the user, and the binary that mounts (path, size,
// modification time). ok is false when no key can be made.
func newProbeCache(path string) (probeCache, bool) {
	var u unix.Utsname
	if err := unix.Uname(&u); err != nil {
		return probeCache{}, false
	}
	exe, err := os.Executable()
	if err != nil {
		return probeCache{}, false
	}
	st, err := os.Stat(exe)
	if err != nil {
		return probeCache{}, false
	}
	key := fmt.Sprintf("%s %s|uid %d|%s %d %d", unix.ByteSliceToString(u.Release[:]), unix.ByteSliceToString(u.Version[:]),
		os.Getuid(), exe, st.Size(), st.ModTime().UnixNano())
	return probeCache{path: path, key: key}, true
}

// load returns the cached Support when the entry is for this key and fresh.
func (c probeCache) load() (Support, bool) {
	b, err := os.ReadFile(c.path)
	if err != nil || len(b) > 64<<10 {
		return Support{}, false
	}
	var e probeEntry
	if json.Unmarshal(b, &e) != nil || e.Key != c.key || time.Since(e.At) > probeCacheTTL || e.At.After(time.Now().Add(time.Minute)) {
		return Support{}, false
	}
	return e.Support, true
}

// store writes s for this key (tmp file and rename: a concurrent reader
// sees the old entry or the new one). Failing to store is not an error.
func (c probeCache) store(s Support) {
	b, err := json.Marshal(probeEntry{Key: c.key, At: time.Now().UTC(), Support: s})
	if err != nil {
		return
	}
	if err := os.MkdirAll(filepath.Dir(c.path), 0o700); err != nil {
		return
	}
	tmp := c.path + ".tmp" + strconv.Itoa(os.Getpid())
	if err := os.WriteFile(tmp, b, 0o600); err != nil {
		return
	}
	if err := os.Rename(tmp, c.path); err != nil {
		os.Remove(tmp)
	}
}

// NewCached is New with the probe's answer kept in the file at path
// between processes (see probeCache for why a wrong entry only costs
// speed): a fresh entry for this kernel, user and binary is used at once,
// with no probe process; otherwise the probe runs in the background as in
// New and its answer is stored. An empty path is New.
func NewCached(ctx context.Context, path string) *Isolator {
	c, ok := newProbeCache(path)
	if path == "" || !ok {
		return New(ctx)
	}
	watchDir := filepath.Join(filepath.Dir(path), "treewatch")
	if s, hit := c.load(); hit {
		i := NewWithSupport(s)
		i.cache, i.cached, i.watchDir = &c, true, watchDir
		return i
	}
	i := &Isolator{ready: make(chan struct{}), cache: &c, watchDir: watchDir}
	go func() {
		defer close(i.ready)
		i.support = Probe(ctx)
		c.store(i.support)
	}()
	return i
}

// Cached reports whether Support came from the cache file.
func (i *Isolator) Cached() bool { return i.cached }

// OverlayFailed records that an overlay child could not mount its copy
// (it exited with ExitMountFailed): from now on this Isolator gives
// worktree copies, and the cache says so. why is the child's explanation.
func (i *Isolator) OverlayFailed(why string) {
	<-i.ready
	i.mu.Lock()
	defer i.mu.Unlock()
	if !i.support.Overlay {
		return
	}
	i.support.Overlay, i.support.UserXattr = false, false
	i.support.Why = "an overlay child could not mount its copy: " + why
	if i.cache != nil {
		i.cache.store(i.support)
	}
}
