package child

import "strings"

// Parse recognises the child protocol's command line, the one a parent
// starts each subagent with: only the flags --mode, --task-id and
// --envelope ("--flag value" or "--flag=value") and --warm, --envelope set
// and the mode json. Anything else is not a child and goes to the command
// tree.
func Parse(args []string) (Options, bool) {
	var o Options
	o.Mode = "json"
	for i := 0; i < len(args); i++ {
		name, val, hasVal := strings.Cut(args[i], "=")
		var dst *string
		switch name {
		case "--warm":
			if hasVal {
				return Options{}, false
			}
			o.Warm = true
			continue
		case "--envelope":
			dst = &o.Envelope
		case "--task-id":
			dst = &o.TaskID
		case "--mode":
			dst = &o.Mode
		default:
			return Options{}, false
		}
		if !hasVal {
			if i+1 >= len(args) {
				return Options{}, false
			}
			i++
			val = args[i]
		}
		*dst = val
	}
	if o.Envelope == "" || o.Mode != "json" {
		return Options{}, false
	}
	return o, true
}
