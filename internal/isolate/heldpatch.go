package isolate

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"slices"
	"strconv"
	"strings"
)

// Held is a patch made elsewhere (a fleet worker's, hostile) cut in two
// for a user who will apply it by hand: what brood would land, and the
// configuration it holds back.
type Held struct {
	// Kept are the sections git reads as changing one path each, none of
	// them configuration (trust.IsConfigPath) and all inside the tree:
	// safe to `git apply --3way`.
	Kept []byte
	// Held is the rest: configuration, renames and copies, sections whose
	// names git and the header disagree on, and what comes before the
	// first section; all of the patch when git cannot read it or reads
	// the kept part otherwise than the cut says.
	Held []byte
	// Names are the paths the held part writes or removes, as git names
	// them (sorted); empty when git could not read the patch.
	Names []string
	// Why says, when Kept is empty and Held is not, why nothing was kept
	// ("" when every section was configuration).
	Why string
}

// HoldConfig cuts patch into Held.Kept and Held.Held, asking git (it
// reads the patch only, applies and writes nothing) for every section's
// old and new names, and checks the kept part the same way once more: a
// kept part git reads as writing any other path than its sections' is
// held back whole. Nothing is written or applied.
func HoldConfig(ctx context.Context, patch []byte) (*Held, error) {
	// git apply run inside a work tree's subdirectory leaves out every
	// path outside it: git runs in a scratch directory that no repository
	// holds (nor any above it: the ceiling).
	dir, err := os.MkdirTemp("", "brood-held-")
	if err != nil {
		return nil, fmt.Errorf("isolate: %w", err)
	}
	defer os.Remove(dir)
	sections, pre := patchSections(patch)
	news, olds, _, err := patchNames(ctx, dir, patch)
	if err != nil || len(news) != len(sections) || len(olds) != len(sections) {
		why := "git reads it as other files than its headers name"
		if err != nil {
			why = "git cannot read it: " + oneLine(err.Error())
		}
		return &Held{Held: patch, Names: allNames(news, olds), Why: why}, nil
	}
	h := &Held{}
	var kept []string
	var held, out bytes.Buffer
	held.Write(pre)
	for i, sec := range sections {
		if news[i] != olds[i] || !inTree(news[i]) || foreignHeld(news[i]) {
			held.Write(sec)
			h.Names = append(h.Names, news[i], olds[i])
			continue
		}
		out.Write(sec)
		kept = append(kept, news[i])
	}
	h.Names = sortedUnique(h.Names)
	h.Held = held.Bytes()
	if len(bytes.TrimSpace(h.Held)) == 0 {
		h.Held = nil
	}
	if out.Len() == 0 {
		return h, nil
	}
	// The cut is a guess from the text; git's reading of what it kept is
	// the check.
	kn, ko, summary, err := patchNames(ctx, dir, out.Bytes())
	if err != nil || !slices.Equal(kn, kept) || !slices.Equal(ko, kept) || renameOrCopy(summary) != "" {
		return &Held{Held: patch, Names: allNames(news, olds), Why: "git reads its harmless-looking part as other files than its headers name"}, nil
	}
	if declaredBinary(out.Bytes(), maxForeignLanded) > maxForeignLanded {
		return &Held{Held: patch, Names: allNames(news, olds), Why: "its binary hunks make more than 1 GiB of files"}, nil
	}
	h.Kept = out.Bytes()
	return h, nil
}

// patchSections splits a patch at each line that starts "diff --git ";
// pre is what comes before the first.
func patchSections(patch []byte) (sections [][]byte, pre []byte) {
	starts := sectionStarts(patch)
	if len(starts) == 0 {
		return nil, patch
	}
	for i, st := range starts {
		end := len(patch)
		if i+1 < len(starts) {
			end = starts[i+1]
		}
		sections = append(sections, patch[st:end])
	}
	return sections, patch[:starts[0]]
}

// sectionStarts are the offsets of the lines of patch that start
// "diff --git " (no content line can: it carries a +, - or space prefix).
func sectionStarts(patch []byte) []int {
	header := []byte("diff --git ")
	var starts []int
	for i := 0; i < len(patch); {
		if bytes.HasPrefix(patch[i:], header) {
			starts = append(starts, i)
		}
		nl := bytes.IndexByte(patch[i:], '\n')
		if nl < 0 {
			break
		}
		i += nl + 1
	}
	return starts
}

func allNames(a, b []string) []string { return sortedUnique(slices.Concat(a, b)) }

func sortedUnique(s []string) []string {
	s = slices.DeleteFunc(slices.Clone(s), func(n string) bool { return n == "" })
	slices.Sort(s)
	return slices.Compact(s)
}

func oneLine(s string) string {
	if first, _, cut := strings.Cut(s, "\n"); cut {
		return first + " …"
	}
	return s
}

// String names what was held, for a message: the names, quoted where
// they hold anything but plain characters, and why when all was held.
func (h *Held) String() string {
	if len(h.Names) == 0 {
		return "the whole patch: " + h.Why
	}
	names := make([]string, len(h.Names))
	for i, n := range h.Names {
		names[i] = n
		if strconv.Quote(n) != `"`+n+`"` || strings.Contains(n, ", ") {
			names[i] = strconv.Quote(n)
		}
	}
	s := strings.Join(names, ", ")
	if h.Why != "" {
		s += " (" + h.Why + ")"
	}
	return s
}
