//go:build linux

package spawn

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/broodhq/brood/internal/pool"
)

// childCgroup is the cgroup v2 directory a started child of task id was
// born in ("" when it is not one of its own: contain mode pidns or none).
func childCgroup(pid int, id string) string {
	mnt, err := pool.CgroupMount()
	if err != nil {
		return ""
	}
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/cgroup", pid))
	if err != nil {
		return ""
	}
	for _, line := range strings.Split(string(b), "\n") {
		if p, ok := strings.CutPrefix(line, "0::"); ok {
			dir := filepath.Join(mnt, p)
			if taskCgroup(mnt, dir, id) {
				return dir
			}
		}
	}
	return ""
}

// taskCgroup reports whether dir is a cgroup brood made for task id under
// the cgroup mount (a sealed record's path is checked all the same).
func taskCgroup(mnt, dir, id string) bool {
	rel, err := filepath.Rel(mnt, dir)
	return err == nil && filepath.IsLocal(rel) && id != "" &&
		strings.HasPrefix(filepath.Base(dir), "brood-"+id+"-")
}

// stopTaskCgroups kills what still runs in the cgroups of rec's child (the
// one named, or, before the record names one, those named by its task id
// under brood's sub-hierarchy) and waits, bounded, until they are empty:
// the root is dead, so nothing else will. It reports whether none has a
// process left.
func stopTaskCgroups(rec *guardRecord) bool {
	mnt, dirs := taskCgroups(rec)
	if mnt == "" {
		return true
	}
	ok := true
	for _, dir := range dirs {
		if !taskCgroup(mnt, dir, rec.TaskID) || cgroupEmpty(dir) {
			continue
		}
		_ = os.WriteFile(filepath.Join(dir, "cgroup.kill"), []byte("1"), 0)
		deadline := time.Now().Add(10 * time.Second)
		for wait := time.Millisecond; !cgroupEmpty(dir) && time.Now().Before(deadline); wait = min(2*wait, 50*time.Millisecond) {
			time.Sleep(wait)
		}
		if !cgroupEmpty(dir) {
			ok = false
		}
	}
	return ok
}

// taskCgroups are the cgroup mount and the cgroups of rec's child (the
// one named, or those named by its task id); "" without a mount.
func taskCgroups(rec *guardRecord) (string, []string) {
	mnt, err := pool.CgroupMount()
	if err != nil {
		return "", nil
	}
	dirs, _ := filepath.Glob(filepath.Join(mnt, "brood", "brood-"+rec.TaskID+"-*"))
	if rec.Cgroup != "" && taskCgroup(mnt, rec.Cgroup, rec.TaskID) {
		dirs = append(dirs, rec.Cgroup)
	}
	return mnt, dirs
}

// taskCgroupsLive reports whether anything still runs in rec's child's
// cgroups: what stopTaskCgroups would kill.
func taskCgroupsLive(rec *guardRecord) bool {
	mnt, dirs := taskCgroups(rec)
	for _, dir := range dirs {
		if taskCgroup(mnt, dir, rec.TaskID) && !cgroupEmpty(dir) {
			return true
		}
	}
	return false
}

// cgroupEmpty reports whether dir has no process in it or below (a cgroup
// that is gone is empty).
func cgroupEmpty(dir string) bool {
	b, err := os.ReadFile(filepath.Join(dir, "cgroup.events"))
	if err != nil {
		return os.IsNotExist(err)
	}
	return strings.Contains(string(b), "populated 0")
}
