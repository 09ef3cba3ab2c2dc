package cmdutil

import (
	"bytes"
	"encoding/csv"
	"strings"

	"github.com/spf13/pflag"
)

// StringArrayVar is fs.StringArrayVar: a repeatable flag taking each value
// whole, the same type name, help and GetStringArray. pflag renders every
// such flag's default through a CSV writer with a 4 KiB buffer when the
// flag is defined, a tenth of a millisecond of every brood start for the
// command tree's twenty of them; an empty default here costs nothing.
func StringArrayVar(fs *pflag.FlagSet, p *[]string, name string, value []string, usage string) {
	*p = value
	fl := fs.VarPF(&stringArray{value: p}, name, "", usage)
	if len(value) == 0 {
		fl.DefValue = "" // pflag's "[]": no "(default [])" in the help either way
	}
}

// StringArray is fs.StringArray (StringArrayVar).
func StringArray(fs *pflag.FlagSet, name string, value []string, usage string) *[]string {
	p := []string{}
	StringArrayVar(fs, &p, name, value, usage)
	return &p
}

// stringArray is pflag's stringArrayValue: the first Set replaces the
// default, each later one appends.
type stringArray struct {
	value   *[]string
	changed bool
}

func (s *stringArray) Set(val string) error {
	if !s.changed {
		*s.value, s.changed = []string{val}, true
		return nil
	}
	*s.value = append(*s.value, val)
	return nil
}

func (s *stringArray) Append(val string) error {
	*s.value = append(*s.value, val)
	return nil
}

func (s *stringArray) Replace(val []string) error {
	out := make([]string, len(val))
	copy(out, val)
	*s.value = out
	return nil
}

func (s *stringArray) GetSlice() []string { return append([]string{}, *s.value...) }

func (s *stringArray) Type() string { return "stringArray" }

func (s *stringArray) String() string {
	if len(*s.value) == 0 {
		return "[]"
	}
	var b bytes.Buffer
	w := csv.NewWriter(&b)
	_ = w.Write(*s.value)
	w.Flush()
	return "[" + strings.TrimSuffix(b.String(), "\n") + "]"
}
