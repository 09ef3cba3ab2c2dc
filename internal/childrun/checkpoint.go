package childrun

import (
	"regexp"
	"strconv"
	"strings"
	"sync"

	"github.com/broodhq/brood/internal/dispatch"
)

var (
	cpType = sync.OnceValue(func() *regexp.Regexp {
		return regexp.MustCompile(`(?i)\*\*Type:\*\*\s*\[?\s*(human-verify|decision|human-action)`)
	})
	cpProgress = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`(?i)\*\*Progress:\*\*\s*(\d+)\s*/\s*(\d+)`) })
	cpBlocked  = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`(?i)\*\*Blocked by:\*\*\s*(.+)`) })
	cpCurrent  = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`(?i)\*\*Task\s*(\d*)\s*:\*\*\s*(.+)`) })
	cpPlan     = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`(?i)\*\*Plan:\*\*\s*(.+)`) })
	cpState    = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`(?i)\*\*Status:\*\*\s*(.+)`) })
	cpRow      = sync.OnceValue(func() *regexp.Regexp {
		return regexp.MustCompile(`^\|\s*(\d+)\s*\|\s*([^|]*)\|\s*([^|]*)\|\s*([^|]*)\|`)
	})
)

// ParseCheckpoint reads the checkpoint return format (## CHECKPOINT REACHED)
// from a child's final text; nil when there is none.
func ParseCheckpoint(text string) *dispatch.Checkpoint {
	i := dispatch.CheckpointStart(text)
	if i < 0 {
		return nil
	}
	body := text[i:]
	cp := &dispatch.Checkpoint{Type: "decision"}
	if m := cpType().FindStringSubmatch(body); m != nil {
		cp.Type = strings.ToLower(m[1])
	}
	if m := cpProgress().FindStringSubmatch(body); m != nil {
		cp.Completed, _ = strconv.Atoi(m[1])
		cp.Total, _ = strconv.Atoi(m[2])
	}
	if m := cpBlocked().FindStringSubmatch(body); m != nil {
		cp.Blocker = strings.TrimSpace(m[1])
	}
	if m := cpCurrent().FindStringSubmatch(body); m != nil {
		cp.CurrentNumber, _ = strconv.Atoi(m[1])
		cp.Current = strings.TrimSpace(m[2])
	}
	if m := cpPlan().FindStringSubmatch(body); m != nil {
		cp.Plan = strings.TrimSpace(m[1])
	}
	if m := cpState().FindStringSubmatch(body); m != nil {
		cp.State = strings.Trim(strings.TrimSpace(m[1]), "[]")
	}
	for _, l := range strings.Split(body, "\n") {
		if m := cpRow().FindStringSubmatch(strings.TrimSpace(l)); m != nil {
			t := dispatch.CompletedTask{Name: strings.TrimSpace(m[2]), Commit: strings.TrimSpace(m[3])}
			for _, f := range strings.Split(m[4], ",") {
				if f = strings.TrimSpace(f); f != "" {
					t.Files = append(t.Files, f)
				}
			}
			cp.Tasks = append(cp.Tasks, t)
		}
	}
	return cp
}
