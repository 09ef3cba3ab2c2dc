package bench

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"time"

	"github.com/broodhq/brood/internal/childexe"
)

// Floor is what the machine itself costs, measured in the same run, so
// brood's figures can be read as ratios against it.
type Floor struct {
	// ExecWall and ExecCPU: fork+exec+wait of a trivial static Go binary.
	ExecWall, ExecCPU time.Duration
	ExecRSSKB         int64
	// RTT is one loopback HTTP request to the fake on a kept-alive
	// connection; RTTFresh opens a new connection each time, as a new
	// child must.
	RTT, RTTFresh time.Duration
	// ChildWall and ChildCPU: a bare Go child that streams an explore
	// child's two requests through anthropic-sdk-go and writes a result
	// file (zero when it could not be built: no Go toolchain or source).
	ChildWall, ChildCPU time.Duration
	ChildRSSKB          int64
	// IdleWall and IdleCPU: exec of the binary the children run, to the
	// first instruction of its main and out (brood-child without
	// arguments prints one line and exits). IdleArgs is what ran.
	IdleWall, IdleCPU time.Duration
	IdleArgs          string
	// RootInit and ChildInit are the package initialisers of brood and of
	// the binary the children run (GODEBUG=inittrace=1).
	RootInit, ChildInit InitCost
}

// staticMain is the trivial program of the exec floor.
const staticMain = "package main\n\nfunc main() {}\n"

// BuildStatic builds a trivial static Go binary (CGO_ENABLED=0) into dir.
func BuildStatic(ctx context.Context, dir string) (string, error) {
	src := filepath.Join(dir, "static-src")
	if err := os.MkdirAll(src, 0o755); err != nil {
		return "", err
	}
	if err := os.WriteFile(filepath.Join(src, "go.mod"), []byte("module benchstatic\n\ngo 1.22\n"), 0o644); err != nil {
		return "", err
	}
	if err := os.WriteFile(filepath.Join(src, "main.go"), []byte(staticMain), 0o644); err != nil {
		return "", err
	}
	out := filepath.Join(dir, "static")
	cmd := exec.CommandContext(ctx, "go", "build", "-o", out, ".")
	cmd.Dir = src
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0", "GOFLAGS=-mod=mod", "GOWORK=off")
	if b, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("build the static floor binary: %v\n%s", err, b)
	}
	return out, nil
}

// BuildPackage builds a main package of this module (e.g. ./cmd/brood)
// from moduleDir into out.
func BuildPackage(ctx context.Context, moduleDir, pkg, out string) error {
	cmd := exec.CommandContext(ctx, "go", "build", "-o", out, pkg)
	cmd.Dir = moduleDir
	if b, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("go build %s: %v\n%s", pkg, err, b)
	}
	return nil
}

// execOnce runs a command to its end and returns its wall time, the CPU of
// it and everything it reaped, and its peak RSS.
func execOnce(ctx context.Context, name string, args ...string) (wall, cpu time.Duration, rssKB int64, err error) {
	cmd := exec.CommandContext(ctx, name, args...)
	start := time.Now()
	if err := cmd.Run(); err != nil {
		return 0, 0, 0, fmt.Errorf("%s: %w", filepath.Base(name), err)
	}
	wall = time.Since(start)
	if ru, ok := cmd.ProcessState.SysUsage().(*syscall.Rusage); ok {
		cpu = time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
		rssKB = ru.Maxrss
	}
	return wall, cpu, rssKB, nil
}

// idleStart execs the child binary n times in the way that reaches its main
// and leaves: brood-child with no arguments (it exits 2 at once), or, when
// the children run brood itself, `brood version` (which also builds the
// command tree: an upper bound).
func (h *Harness) idleStart(ctx context.Context, n int) (wall, cpu time.Duration, what string, err error) {
	var args []string
	what = filepath.Base(h.child)
	if b := filepath.Base(h.child); b != childexe.Name && b != childexe.NameOpenAI {
		args = []string{"version"}
		what += " version"
	}
	var walls, cpus []time.Duration
	for range n {
		cmd := exec.CommandContext(ctx, h.child, args...)
		cmd.Env = h.env(5)
		start := time.Now()
		err := cmd.Run()
		w := time.Since(start)
		var ee *exec.ExitError
		if err != nil && !(errors.As(err, &ee) && ee.ExitCode() == 2 && args == nil) {
			return 0, 0, what, fmt.Errorf("idle start of %s: %w", h.child, err)
		}
		walls = append(walls, w)
		if ru, ok := cmd.ProcessState.SysUsage().(*syscall.Rusage); ok {
			cpus = append(cpus, time.Duration(ru.Utime.Nano()+ru.Stime.Nano()))
		}
	}
	return median(walls), median(cpus), what, nil
}

// measureFloor measures the floors n times each and keeps the medians.
func (h *Harness) measureFloor(ctx context.Context, n int) (f Floor, err error) {
	var walls, cpus []time.Duration
	var rss []int64
	for range n {
		w, c, r, err := execOnce(ctx, h.static)
		if err != nil {
			return f, err
		}
		walls, cpus, rss = append(walls, w), append(cpus, c), append(rss, r)
	}
	f.ExecWall, f.ExecCPU, f.ExecRSSKB = median(walls), median(cpus), medianInt(rss)

	if f.IdleWall, f.IdleCPU, f.IdleArgs, err = h.idleStart(ctx, n); err != nil {
		return f, err
	}
	if f.RootInit, err = initCost(ctx, n, h.env(5), 0, h.cfg.Brood, "version"); err != nil {
		return f, fmt.Errorf("brood version with GODEBUG=inittrace=1: %w", err)
	}
	childArgv, okExit := []string{h.child}, 2
	if b := filepath.Base(h.child); b != childexe.Name && b != childexe.NameOpenAI {
		childArgv, okExit = []string{h.child, "version"}, 0
	}
	if f.ChildInit, err = initCost(ctx, n, h.env(5), okExit, childArgv...); err != nil {
		return f, fmt.Errorf("%s with GODEBUG=inittrace=1: %w", h.child, err)
	}

	h.fake.Reset(0, 0, h.proj.readme)
	for _, fresh := range []bool{false, true} {
		c := &http.Client{Transport: &http.Transport{DisableKeepAlives: fresh}}
		var rtts []time.Duration
		for i := range 4 * n {
			start := time.Now()
			if err := h.fake.Probe(ctx, c); err != nil {
				return f, err
			}
			if i > 0 || fresh { // the first kept-alive request pays the dial
				rtts = append(rtts, time.Since(start))
			}
		}
		c.CloseIdleConnections()
		if fresh {
			f.RTTFresh = median(rtts)
		} else {
			f.RTT = median(rtts)
		}
	}

	if h.floorChild != "" {
		walls, cpus, rss = nil, nil, nil
		out := filepath.Join(h.dir, "floor-result.json")
		for range n {
			h.fake.Reset(1, 0, h.proj.readme)
			w, c, r, err := execOnce(ctx, h.floorChild, h.fake.URL, out)
			if err != nil {
				return f, err
			}
			walls, cpus, rss = append(walls, w), append(cpus, c), append(rss, r)
		}
		f.ChildWall, f.ChildCPU, f.ChildRSSKB = median(walls), median(cpus), medianInt(rss)
	}
	return f, nil
}
