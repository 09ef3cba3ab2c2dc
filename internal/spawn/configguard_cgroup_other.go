//go:build !linux

package spawn

// Off Linux there are no cgroups: the child's pid is all a record names.
func childCgroup(pid int, id string) string { return "" }

func stopTaskCgroups(rec *guardRecord) bool { return true }

func taskCgroupsLive(rec *guardRecord) bool { return false }

type taskProc struct{}

func taskProcs(rec *guardRecord) []taskProc { return nil }

func stopTaskProcs(rec *guardRecord, ps []taskProc) bool { return true }
