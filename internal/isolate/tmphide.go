package isolate

import (
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/broodhq/brood/internal/dispatch"
)

// The host's shared temporary directories are no child's (review C6):
// they hold other sessions' scratch and transcripts (a fleet worker's
// continued call's, brood-apply-*, brood-landed-*), Kerberos tickets
// (krb5cc_*), agent sockets' directories and editors' swap files. Every
// child's TMPDIR is its own tmp/ in its task directory (RestrictChild),
// so it needs none of them; what it must still read there (its tree, its
// task directory, brood's binary, a home or a PATH directory a test made
// there) is kept (tempKeep), split around when its rules are built
// (sandbox.Policy.HiddenAround: /tmp's entries change by the second).

// hostTemps are the shared temporary directories, by their real paths:
// /tmp, /var/tmp, /dev/shm and the TMPDIR of the environment (this
// process's and the children's, getenv), but one beneath keep (a child
// dispatcher's TMPDIR is its own task directory's tmp/).
func hostTemps(getenv func(string) string, keep []string) []string {
	cands := []string{"/tmp", "/var/tmp", "/dev/shm", os.Getenv("TMPDIR")}
	if getenv != nil {
		cands = append(cands, getenv("TMPDIR"))
	}
	var out []string
next:
	for _, t := range cands {
		if !filepath.IsAbs(t) || filepath.Clean(t) == "/" {
			continue
		}
		t = realPath(filepath.Clean(t))
		for _, k := range keep {
			if beneath(k, t) {
				continue next
			}
		}
		out = appendNew(out, t)
	}
	return out
}

// tempKeep are keep and what a child reads beyond it that may be in a
// host temporary directory: what every child of base reads (envKeep), the
// added working directories and a scripted model's file. None that is one
// of temps itself (HOME=/tmp would keep it all).
func tempKeep(env *dispatch.Envelope, keep, temps []string, base *PolicyBase) []string {
	out := slices.Clone(keep)
	for _, p := range base.envKeep() {
		if !slices.Contains(temps, p) {
			out = appendNew(out, p)
		}
	}
	add := func(p string) {
		if !filepath.IsAbs(p) {
			return
		}
		p = Resolved(filepath.Clean(p))
		if p != "/" && !slices.Contains(temps, p) {
			out = appendNew(out, p)
		}
	}
	for _, d := range env.AddDirs {
		add(d)
	}
	if f, ok := strings.CutPrefix(env.Model, "script:"); ok {
		add(f)
	}
	return out
}

// keepProgram is keep with the program at path (a child's binary) and
// its directory (a lean child binary beside it) added, when temps hides
// anything: the directory unless it is one of temps itself.
func keepProgram(keep, temps []string, path string) []string {
	if len(temps) == 0 || !filepath.IsAbs(path) {
		return keep
	}
	p := Resolved(path)
	keep = appendNew(keep, p)
	if d := filepath.Dir(p); !slices.Contains(temps, d) {
		keep = appendNew(keep, d)
	}
	return keep
}

// envKeep are the paths every child of b reads that may be in a host
// temporary directory, found once: brood's own binaries (this one's
// directory, and BROOD_CHILD_EXE's), the homes, the PATH's directories
// (and the toolchain above a .../bin) and the user's Go caches, in this
// process's environment and the children's, by their real paths.
func (b *PolicyBase) envKeep() []string {
	b.keepOnce.Do(func() {
		add := func(p string) {
			if filepath.IsAbs(p) {
				if p = Resolved(filepath.Clean(p)); p != "/" {
					b.keep = appendNew(b.keep, p)
				}
			}
		}
		if exe, err := os.Executable(); err == nil {
			add(filepath.Dir(exe))
		}
		envs := []func(string) string{os.Getenv}
		if b.getenv != nil {
			envs = append(envs, b.getenv)
		}
		for _, g := range envs {
			if c := g("BROOD_CHILD_EXE"); c != "" {
				add(filepath.Dir(c))
			}
			for _, d := range filepath.SplitList(g("PATH")) {
				add(d)
				if filepath.Base(d) == "bin" {
					add(filepath.Dir(d))
				}
			}
		}
		for _, h := range homes(envs...) {
			add(h)
		}
		for _, c := range CacheCandidates() {
			add(c)
		}
	})
	return b.keep
}
