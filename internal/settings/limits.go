package settings

import (
	"fmt"

	"github.com/broodhq/brood/internal/limits"
)

// Limits are the [limits] table: what one child may consume (memory,
// processes, open files, spilled output). Values are written as in an agent
// definition's `limits:` ("4GiB", 2048, "unlimited"); unset ones take the
// built-in defaults (limits.Defaults).
type Limits struct {
	Memory    LimitValue `toml:"memory"`
	Processes LimitValue `toml:"processes"`
	Files     LimitValue `toml:"files"`
	Output    LimitValue `toml:"output"`
	FileSize  LimitValue `toml:"file_size"`
}

// LimitValue is one limit as written: a TOML string or integer.
type LimitValue string

// UnmarshalTOML takes a string ("4GiB", "unlimited") or an integer (2048).
func (v *LimitValue) UnmarshalTOML(data any) error {
	switch x := data.(type) {
	case string:
		*v = LimitValue(x)
	case int64:
		*v = LimitValue(fmt.Sprint(x))
	default:
		return fmt.Errorf("[limits]: %v is neither a size such as \"4GiB\" nor a whole number", data)
	}
	return nil
}

// Child resolves the limits of one child: the defaults, under these
// settings. The error names the key and what to write.
func (l Limits) Child() (limits.Set, error) {
	s := limits.Defaults()
	for _, f := range []struct {
		key string
		v   LimitValue
	}{{"memory", l.Memory}, {"processes", l.Processes}, {"files", l.Files}, {"output", l.Output}, {"file_size", l.FileSize}} {
		if f.v == "" {
			continue
		}
		n, err := limits.Parse(f.key, string(f.v))
		if err != nil {
			return s, err
		}
		s = s.Over(limitSet(f.key, n))
	}
	return s, nil
}

func limitSet(key string, n int64) limits.Set {
	switch key {
	case "memory":
		return limits.Set{Memory: n}
	case "processes":
		return limits.Set{Processes: n}
	case "files":
		return limits.Set{Files: n}
	case "file_size":
		return limits.Set{FileSize: n}
	}
	return limits.Set{Output: n}
}

// raisedLimits lists the [limits] that full raises above base (a project
// file's, held back until the project is trusted) and resets them in out.
func raisedLimits(base, full Settings, out *Settings) (why, keys []string) {
	b, errB := base.Limits.Child()
	f, errF := full.Limits.Child()
	if errB != nil || errF != nil {
		return nil, nil // validate reports it
	}
	for _, c := range []struct {
		key   string
		reset func()
	}{
		{"memory", func() { out.Limits.Memory = base.Limits.Memory }},
		{"processes", func() { out.Limits.Processes = base.Limits.Processes }},
		{"files", func() { out.Limits.Files = base.Limits.Files }},
		{"output", func() { out.Limits.Output = base.Limits.Output }},
		{"file_size", func() { out.Limits.FileSize = base.Limits.FileSize }},
	} {
		if limits.Below(b.Get(c.key), f.Get(c.key)) {
			why = append(why, fmt.Sprintf("limits.%s %s", c.key, limits.Format(c.key, f.Get(c.key))))
			keys = append(keys, "limits."+c.key)
			c.reset()
		}
	}
	return why, keys
}
