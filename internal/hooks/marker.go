package hooks

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"

	"github.com/broodhq/brood/internal/dispatch"
)

// marker is the record of a fired SubagentStart, in the root's own records
// (out of every sandboxed child's reach): <task>.<n>.start. Its stop is
// <task>.<n>.stop, created exclusively by whichever process fires the
// SubagentStop, so that it fires once.
type marker struct {
	Common  Common       `json:"common"`
	Info    SubagentInfo `json:"info"`
	TaskDir string       `json:"task_dir"`
	Parent  string       `json:"parent,omitempty"`
	Owner   owner        `json:"owner"`
}

// owner identifies the process that fired the start: while it lives, the
// stop is its to fire.
type owner struct {
	PID   int    `json:"pid"`
	Start string `json:"start"` // the process's start time in /proc (pid reuse)
}

func ownerOf() owner {
	pid := os.Getpid()
	return owner{PID: pid, Start: procStart(pid)}
}

func (o owner) alive() bool {
	return o.PID > 0 && o.Start != "" && procStart(o.PID) == o.Start
}

// procStart is field 22 of /proc/PID/stat ("" when there is no process).
func procStart(pid int) string {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return ""
	}
	s := string(b)
	i := strings.LastIndexByte(s, ')')
	if i < 0 {
		return ""
	}
	f := strings.Fields(s[i+1:]) // field 3 onwards
	if len(f) < 20 {
		return ""
	}
	return f[19]
}

// claimStart writes m as the next free start marker of its task (a resumed
// task starts again) and returns its key.
func claimStart(dir string, m *marker) (string, error) {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return "", err
	}
	data, err := json.Marshal(m)
	if err != nil {
		return "", err
	}
	tmp, err := os.CreateTemp(dir, ".start-*")
	if err != nil {
		return "", err
	}
	defer os.Remove(tmp.Name())
	if _, err := tmp.Write(data); err != nil {
		tmp.Close()
		return "", err
	}
	if err := tmp.Sync(); err != nil {
		tmp.Close()
		return "", err
	}
	tmp.Close()
	for n := 0; n < 1000; n++ {
		key := m.Info.TaskID + "." + strconv.Itoa(n)
		// A link is an exclusive create of a file that is already whole.
		err := os.Link(tmp.Name(), filepath.Join(dir, key+".start"))
		if err == nil {
			return key, nil
		}
		if !errors.Is(err, fs.ErrExist) {
			return "", err
		}
	}
	return "", errors.New("too many runs of one task")
}

// claimStop creates the stop marker of key; only the process that creates
// it fires the stop.
func claimStop(dir, key string) bool {
	f, err := os.OpenFile(filepath.Join(dir, key+".stop"), os.O_CREATE|os.O_EXCL|os.O_WRONLY|syscall.O_NOFOLLOW, 0o600)
	if err != nil {
		return false
	}
	f.Close()
	return true
}

// LateStops fires the SubagentStop of every subagent whose start was
// fired by a brood process that died before it could fire the stop, marked
// late. Only a process that runs agents calls it (brood run, tasks resume,
// the interactive session), never a listing; a marker is claimed
// exclusively, so two such processes never fire the same stop. It returns
// how many it fired.
func (s *Session) LateStops(ctx context.Context, recordsDir string) int {
	if s == nil || !(s.r.Has(SubagentStart) || s.r.Has(SubagentStop)) {
		return 0
	}
	names, err := filepath.Glob(filepath.Join(recordsDir, "*.start"))
	if err != nil {
		return 0
	}
	n := 0
	for _, p := range names {
		key := strings.TrimSuffix(filepath.Base(p), ".start")
		if _, err := os.Lstat(filepath.Join(recordsDir, key+".stop")); err == nil {
			continue
		}
		var m marker
		if readMarker(p, &m) != nil || !validID(m.Info.TaskID) || !strings.HasPrefix(key, m.Info.TaskID+".") {
			continue
		}
		if m.Owner.alive() || dispatch.TaskLocked(m.TaskDir) {
			continue // its process, or its task, is still there
		}
		if !claimStop(recordsDir, key) {
			continue
		}
		info := m.Info
		info.Late = true
		s.r.Fire(ctx, SubagentStop, m.Common.AgentType, s.stopInput(&m, info))
		n++
	}
	return n
}

func readMarker(path string, m *marker) error {
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NOFOLLOW, 0)
	if err != nil {
		return err
	}
	defer f.Close()
	return json.NewDecoder(f).Decode(m)
}

// validID accepts a task id (a ULID: 26 characters of Crockford base32).
func validID(id string) bool {
	if len(id) != 26 {
		return false
	}
	for _, c := range id {
		if !strings.ContainsRune("0123456789ABCDEFGHJKMNPQRSTVWXYZ", c) {
			return false
		}
	}
	return true
}

// Forget removes the markers of a task whose every stop has fired (brood
// tasks prune); a start still owed its stop is kept, so the stop still
// fires late.
func Forget(recordsDir, taskID string) {
	if !validID(taskID) {
		return
	}
	starts, _ := filepath.Glob(filepath.Join(recordsDir, taskID+".*.start"))
	for _, p := range starts {
		stop := strings.TrimSuffix(p, ".start") + ".stop"
		if _, err := os.Lstat(stop); err == nil {
			os.Remove(p)
			os.Remove(stop)
		}
	}
}
