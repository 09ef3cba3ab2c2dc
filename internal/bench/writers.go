package bench

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"
)

// Writer kinds: one child that reads (explore), or writes one file in
// place or on its own copy of the tree (general-purpose, isolation none or
// worktree).
const (
	kindReader   = "reader"
	kindInPlace  = "none"
	kindIsolated = "worktree"
)

// target29Writer: a writer's fixed cost over a reader's, per run.
const target29Writer = 25 * time.Millisecond

// WriterRow is the medians of every run of one kind of child on one tree.
type WriterRow struct {
	Files     int
	Kind      string
	Runs      int
	Wall, CPU time.Duration
	Done      int // the fewest results that said done
	// Stages is the child's spawn trace (with Trace), "total" last.
	Stages []StageRow
}

// writers runs one child of each kind on a committed tree of each size,
// interleaved (reader, in place, isolated; size by size; rep by rep), the
// whole `brood run` timed.
func (h *Harness) writers(ctx context.Context, sizes []int, reps int) ([]WriterRow, error) {
	projs := map[int]*project{}
	for _, n := range sizes {
		h.progress(fmt.Sprintf("writers: a tree of %d files", n))
		p, err := newTreeProject(filepath.Join(h.dir, fmt.Sprintf("tree-%d", n)), n)
		if err != nil {
			return nil, err
		}
		projs[n] = p
	}
	kinds := []string{kindReader, kindInPlace, kindIsolated}
	by := map[string][]*Sample{}
	main := h.proj
	defer func() { h.proj, h.writer = main, "" }()
	for r := range reps {
		for _, n := range sizes {
			for _, kind := range kinds {
				h.proj, h.writer = projs[n], ""
				if kind != kindReader {
					h.writer = kind
				}
				s, err := h.runCmd(ctx, []string{h.cfg.Brood, "run", "--model", h.modelSpec()}, h.env(5), 1, 5, 0, false)
				if err != nil {
					return nil, fmt.Errorf("%d files, %s: %w", n, kind, err)
				}
				// What the writer made (in place, or landed from its copy)
				// goes, so every run starts from the same tree.
				_ = os.Remove(WrittenPath(h.proj.readme, 0))
				key := fmt.Sprintf("%d/%s", n, kind)
				by[key] = append(by[key], s)
				h.progress(fmt.Sprintf("writers rep %d/%d, %d files, %s: wall %s cpu %s done %d", r+1, reps, n, kind, ms(s.Wall), ms(s.CPU), s.Done))
			}
		}
	}
	var rows []WriterRow
	for _, n := range sizes {
		for _, kind := range kinds {
			ss := by[fmt.Sprintf("%d/%s", n, kind)]
			row := WriterRow{Files: n, Kind: kind, Runs: len(ss), Done: -1}
			var walls, cpus []time.Duration
			for _, s := range ss {
				walls, cpus = append(walls, s.Wall), append(cpus, s.CPU)
				if row.Done < 0 || s.Done < row.Done {
					row.Done = s.Done
				}
			}
			row.Wall, row.CPU = median(walls), median(cpus)
			row.Stages = stageRows(ss)
			rows = append(rows, row)
		}
	}
	return rows, nil
}

// newTreeProject is the bench project with n more files committed, 100 to
// a directory.
func newTreeProject(dir string, n int) (*project, error) {
	p, err := newProject(dir, true)
	if err != nil {
		return nil, err
	}
	for i := range n {
		d := filepath.Join(p.root, "tree", fmt.Sprintf("d%04d", i/100))
		if i%100 == 0 {
			if err := os.MkdirAll(d, 0o755); err != nil {
				return nil, err
			}
		}
		if err := os.WriteFile(filepath.Join(d, fmt.Sprintf("f%03d.txt", i%100)), []byte(fmt.Sprintf("file %d\n", i)), 0o644); err != nil {
			return nil, err
		}
	}
	if err := p.git([]string{"add", "."}, []string{"commit", "-q", "-m", "tree"}); err != nil {
		return nil, err
	}
	return p, nil
}

// writerTable writes the writers' rows: each kind's wall against the
// reader's on the same tree, and issue 29's target.
func (rep *Report) writerTable(w io.Writer) {
	if len(rep.Writers) == 0 {
		return
	}
	fmt.Fprintln(w, "### Writers on large trees (one child; the whole `brood run`, medians, interleaved)")
	fmt.Fprintln(w)
	fmt.Fprintln(w, "| files | reader (explore) | in place | − reader | isolated | − reader | target | children done, fewest of a run (reader / in place / isolated) |")
	fmt.Fprintln(w, "|---:|---:|---:|---:|---:|---:|---:|---|")
	for i := 0; i+2 < len(rep.Writers); i += 3 {
		r, in, iso := rep.Writers[i], rep.Writers[i+1], rep.Writers[i+2]
		dIn, dIso := in.Wall-r.Wall, iso.Wall-r.Wall
		fmt.Fprintf(w, "| %d | %s | %s | %s | %s | %s | ≤ %s: %s | %d / %d / %d |\n", r.Files, ms(r.Wall), ms(in.Wall), ms(dIn), ms(iso.Wall), ms(dIso),
			ms(target29Writer), verdict(dIn <= target29Writer && dIso <= target29Writer), r.Done, in.Done, iso.Done)
	}
	fmt.Fprintln(w)
	// With --trace: where each kind's spawn goes (stages over 1 ms, means).
	for _, row := range rep.Writers {
		var parts []string
		for _, st := range row.Stages {
			if st.Mean >= time.Millisecond {
				parts = append(parts, fmt.Sprintf("%s %s", st.Name, ms(st.Mean)))
			}
		}
		if len(parts) > 0 {
			fmt.Fprintf(w, "- spawn trace, %d files, %s: %s\n", row.Files, row.Kind, strings.Join(parts, ", "))
		}
	}
	fmt.Fprintln(w)
}
