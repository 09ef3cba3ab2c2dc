package isolate

import (
	"bufio"
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"

	"github.com/broodhq/brood/internal/dispatch"
)

// A writer's Go caches are its own (review C13), and its task's alone
// (red team 20, P2-4). The user's build cache holds compiled objects and
// test results keyed by their inputs, linked as they are; the module cache
// holds the source of every dependency the user compiles, and go never
// re-hashes an extracted module nor an action entry it reads. A writer
// that could write a cache another build reads would run its code there:
// the user's next, unconfined, build, or a later writer of the project
// (once, the project's writers shared one cache, kept across runs, and a
// rejected task's plant in it ran in every honest writer after it). So a
// writer gets a build cache and a module cache in its own TMPDIR, made by
// its go and removed with the TMPDIR when the run is settled (or, on a
// fleet worker, its call's, in the call's task directory: tenants share
// nothing), and the user's module cache only to read: the downloads there
// are its first module proxy (GOPROXY=file://…/cache/download), so a
// module the user has is extracted from it, with no network, and a new one
// is fetched as before. What a second writer of the project pays is
// compiling again what the first compiled (docs/performance.md).

// writerGoDirs are the build and module caches of env's writer working
// from task directory dir: in its TMPDIR (dir/tmp/go/), or, for a fleet
// worker's call, dir/go (the call's, kept between its turns).
func writerGoDirs(env *dispatch.Envelope, dir string) (build, mod string) {
	base := filepath.Join(dir, "tmp", "go")
	if ws := Resolved(cmpNonEmpty(env.IsolationRoot, env.Workspace)); inFleetCache(ws) {
		base = filepath.Join(dir, "go")
	}
	return filepath.Join(base, "build"), filepath.Join(base, "mod")
}

// inFleetCache reports whether p is beneath the fleet worker's cache.
func inFleetCache(p string) bool {
	cache, err := os.UserCacheDir()
	return err == nil && p != "" && beneath(realPath(filepath.Join(cache, "brood", "fleet")), p)
}

func cmpNonEmpty(a, b string) string {
	if a != "" {
		return a
	}
	return b
}

// makeTaskGoCaches makes a writer's Go caches in its TMPDIR in dir, where
// its parent pointed its go at them (getenv: writerGoEnv's GOCACHE and
// GOMODCACHE), empty where no overlay was mounted there (mountGoLayers:
// the user has no cache of that kind, or no overlay mounts): a command
// that writes $GOCACHE before go has run finds it, as go would make it.
// The child makes them before any of its commands runs, in the TMPDIR its
// parent removed before the start (no link of an earlier turn's there).
func makeTaskGoCaches(env *dispatch.Envelope, dir string, getenv func(string) string) {
	if env.ReadOnly {
		return
	}
	build, mod := writerGoDirs(env, dir)
	for _, c := range []struct{ name, dir string }{{"GOCACHE", build}, {"GOMODCACHE", mod}} {
		if getenv(c.name) == c.dir && beneath(filepath.Join(dir, "tmp"), c.dir) {
			_ = os.MkdirAll(c.dir, 0o700) // (else go makes it, or says why not)
		}
	}
}

// writerGoEnv are the environment entries that point env's writer's go
// at its own caches (writerGoDirs: its go makes them; a fleet call's are
// made here), with the user's module downloads as its first proxy; lookup
// reads the environment the child gets. With GOPRIVATE or GONOPROXY set, a private module would be
// fetched directly, past the user's downloads, with credentials no child
// reads: every module then comes from the user's downloads, none from
// elsewhere (and none is looked up in the checksum database that was not
// before). None when a fleet call's caches cannot be made.
func writerGoEnv(env *dispatch.Envelope, dir string, lookup func(string) string) []string {
	build, mod := writerGoDirs(env, dir)
	task := beneath(filepath.Join(dir, "tmp"), build) // (not a fleet call's)
	if !task {
		for _, d := range []string{build, mod} {
			if err := os.MkdirAll(d, 0o700); err != nil {
				return nil
			}
		}
	}
	out := []string{"GOCACHE=" + build, "GOMODCACHE=" + mod}
	userBuild, user := userGoCaches(lookup)
	if layers := goLayers(build, mod, userBuild, user); task && layers != "" {
		out = append(out, layers)
	}
	b, _ := json.Marshal(goUser{Build: userBuild, Mod: user})
	out = append(out, goUserVar+"="+string(b))
	if user == "" {
		return out
	}
	local := "file://" + filepath.Join(user, "cache", "download")
	if goSetting(lookup, "GOPRIVATE") != "" || goSetting(lookup, "GONOPROXY") != "" {
		nosum := goSetting(lookup, "GONOSUMDB")
		if nosum == "" {
			nosum = goSetting(lookup, "GOPRIVATE")
		}
		return append(out, "GOPROXY="+local+",off", "GONOPROXY=", "GOPRIVATE=", "GONOSUMDB="+nosum)
	}
	proxy := goSetting(lookup, "GOPROXY")
	if proxy == "" {
		proxy = "https://proxy.golang.org,direct"
	}
	return append(out, "GOPROXY="+local+","+proxy)
}

// mountedGoCaches are the user's caches this very process mounted its
// overlays over (goMountedVar, set by mountGoLayers before any command
// ran): its writer may write them, its writes kept in their upper layers.
// None where it mounted none: the user's own cache is never writable.
func mountedGoCaches() []string {
	var m goMounted
	if v := os.Getenv(goMountedVar); v == "" || json.Unmarshal([]byte(v), &m) != nil || m.PID != os.Getpid() {
		return nil
	}
	var out []string
	for _, p := range m.Paths {
		if filepath.IsAbs(p) {
			out = append(out, filepath.Clean(p))
		}
	}
	return out
}

// goLayers is the environment entry (goLayersVar) that has the writer's
// child mount its caches build and mod, in its TMPDIR, over the user's
// (userBuild, userMod: "" where there is none), or "" for none. (Not for
// a fleet call's caches: its worker's are no tenant's lower layer.)
func goLayers(build, mod, userBuild, userMod string) string {
	var layers []goLayer
	for _, l := range []goLayer{{"GOCACHE", build, userBuild}, {"GOMODCACHE", mod, userMod}} {
		if l.Lower != "" {
			layers = append(layers, l)
		}
	}
	if len(layers) == 0 {
		return ""
	}
	b, _ := json.Marshal(layers)
	return goLayersVar + "=" + string(b)
}

// userGoCaches are the user's build and module caches: for a writer's
// child that starts its own, as its parent said them (goUserVar: its own
// GOCACHE and GOMODCACHE are in its TMPDIR, which its children do not
// read), else as the environment says (userBuildCache, userModCache).
func userGoCaches(lookup func(string) string) (build, mod string) {
	var u goUser
	if v := lookup(goUserVar); v != "" && json.Unmarshal([]byte(v), &u) == nil {
		return existingDir(u.Build), existingDir(u.Mod)
	}
	return userBuildCache(lookup), userModCache(lookup)
}

// existingDir is p, absolute and clean, where it is a directory, else "".
func existingDir(p string) string {
	if fi, err := os.Stat(p); !filepath.IsAbs(p) || err != nil || !fi.IsDir() {
		return ""
	}
	return filepath.Clean(p)
}

// userBuildCache is the user's build cache (GOCACHE, else the user cache
// directory's go-build) where it exists.
func userBuildCache(lookup func(string) string) string {
	c := goSetting(lookup, "GOCACHE")
	if c == "" {
		cache := lookup("XDG_CACHE_HOME")
		if !filepath.IsAbs(cache) {
			if home := lookup("HOME"); filepath.IsAbs(home) {
				cache = filepath.Join(home, ".cache")
			}
		}
		if filepath.IsAbs(cache) {
			c = filepath.Join(cache, "go-build")
		}
	}
	if fi, err := os.Stat(c); !filepath.IsAbs(c) || err != nil || !fi.IsDir() {
		return ""
	}
	return filepath.Clean(c)
}

// userModCache is the user's module cache (GOMODCACHE, else the first
// GOPATH entry's pkg/mod, else ~/go/pkg/mod) where it exists.
func userModCache(lookup func(string) string) string {
	mod := goSetting(lookup, "GOMODCACHE")
	if mod == "" {
		gopath := goSetting(lookup, "GOPATH")
		if gopath == "" {
			if home := lookup("HOME"); filepath.IsAbs(home) {
				gopath = filepath.Join(home, "go")
			}
		}
		if first := filepath.SplitList(gopath); len(first) > 0 {
			mod = filepath.Join(first[0], "pkg", "mod")
		}
	}
	if fi, err := os.Stat(mod); !filepath.IsAbs(mod) || err != nil || !fi.IsDir() {
		return ""
	}
	return filepath.Clean(mod)
}

// goSetting is a go environment setting as the user's go sees it: the
// environment's, else the go env file's (go env -w: $GOENV, else
// $XDG_CONFIG_HOME/go/env or ~/.config/go/env).
func goSetting(lookup func(string) string, name string) string {
	if v := lookup(name); v != "" {
		return v
	}
	file := lookup("GOENV")
	if file == "" || file == "off" {
		conf := lookup("XDG_CONFIG_HOME")
		if !filepath.IsAbs(conf) {
			conf = filepath.Join(lookup("HOME"), ".config")
		}
		if file == "off" || !filepath.IsAbs(conf) {
			return ""
		}
		file = filepath.Join(conf, "go", "env")
	}
	data, err := os.ReadFile(file)
	if err != nil || len(data) > 1<<16 {
		return ""
	}
	sc := bufio.NewScanner(bytes.NewReader(data))
	for sc.Scan() {
		if v, ok := strings.CutPrefix(strings.TrimSpace(sc.Text()), name+"="); ok {
			return v
		}
	}
	return ""
}
