// Package tui is brood's interactive mode: a terminal UI over the same
// engine as `brood run`. It shows the conversation with the root agent
// (its answer streamed and rendered as markdown, its tool calls one line
// each), a live tree of every subagent of the session and their nested
// dispatches (kill, message, resume from the tree), the slash commands
// (/subagent, /tasks, /agents, /model, /clear, /help), and every permission
// question, the root's own and its children's, with the asking agent named.
package tui

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	tea "charm.land/bubbletea/v2"

	"github.com/broodhq/brood/internal/session"
	"github.com/broodhq/brood/internal/taskdir"
)

// Run opens the interactive mode on the terminal in/out and returns when
// the user leaves. Every child is stopped in stages before it returns; each
// stays resumable.
func Run(ctx context.Context, cfg Config, in, out *os.File, errOut io.Writer) error {
	if cfg.Getenv == nil {
		cfg.Getenv = os.Getenv
	}
	eng, err := newEngine(ctx, cfg)
	if err != nil {
		return err
	}
	color := cfg.Getenv("NO_COLOR") == "" && cfg.Getenv("TERM") != "dumb"
	m := newModel(eng, color, time.Now)
	p := tea.NewProgram(m, tea.WithContext(ctx), tea.WithInput(in), tea.WithOutput(out))
	_, runErr := p.Run()
	path := eng.sessionPath()
	eng.finish()
	fmt.Fprintf(errOut, "· session %s; reopen it with: brood --resume %s\n", rel(cfg.ProjectRoot, path), sessionID(path))
	if runErr != nil && ctx.Err() == nil {
		return runErr
	}
	return nil
}

// finish is the end of the engine after the UI has gone: the turn is
// interrupted, every child stopped in stages and waited for, and the
// transcript closed.
func (e *engine) finish() {
	close(e.done)
	e.interrupt()
	e.stopLife()
	e.mu.Lock()
	done := e.turnDone
	e.mu.Unlock()
	if done != nil {
		<-done
	}
	if e.disp != nil {
		e.disp.WaitBackground()
		e.disp.Close()
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.tw != nil {
		e.tw.Close()
		e.tw = nil
	}
}

func sessionID(path string) string {
	if path == "" {
		return ""
	}
	return strings.TrimSuffix(filepath.Base(path), ".jsonl")
}

func rel(root, path string) string {
	if r, err := filepath.Rel(root, path); err == nil && !strings.HasPrefix(r, "..") {
		return r
	}
	return path
}

// SessionPath finds the transcript to reopen: the latest session of the
// project for --continue, or the one named by id (a session id or a path)
// for --resume. Only a session this user's brood made is reopened
// (session.Mine): a newer one a repository shipped is passed over, said
// on warn; one named is refused, saying why.
func SessionPath(projectRoot, resume string, cont bool, warn io.Writer) (string, error) {
	dir := taskdir.Open(projectRoot).SessionsDir()
	if resume != "" {
		for _, p := range []string{resume, filepath.Join(dir, resume), filepath.Join(dir, resume+".jsonl")} {
			if strings.HasSuffix(p, ".jsonl") && fileExists(p) {
				if session.InDir(dir, p) {
					if err := session.Mine(p); err != nil {
						return "", fmt.Errorf("--resume: %w", err)
					}
				}
				return p, nil
			}
		}
		return "", fmt.Errorf("--resume %s: no such session in %s; brood --continue reopens the latest", resume, dir)
	}
	if !cont {
		return "", nil
	}
	ents, err := os.ReadDir(dir)
	if err != nil {
		return "", fmt.Errorf("--continue: no sessions in %s yet", dir)
	}
	var ids []string
	for _, e := range ents {
		if !e.IsDir() && strings.HasSuffix(e.Name(), ".jsonl") {
			ids = append(ids, strings.TrimSuffix(e.Name(), ".jsonl")) // ULIDs: sorted by time
		}
	}
	mine, others := session.Split(dir, ids)
	if len(mine) == 0 {
		if len(others) > 0 {
			return "", fmt.Errorf("--continue: %w", session.Mine(filepath.Join(dir, others[len(others)-1]+".jsonl")))
		}
		return "", fmt.Errorf("--continue: no sessions in %s yet", dir)
	}
	latest := mine[len(mine)-1]
	if skipped := len(ids) - 1 - slices.Index(ids, latest); skipped > 0 && warn != nil {
		fmt.Fprintf(warn, "%s; continuing %s, the newest of yours\n", session.LeftOut(dir, skipped), latest)
	}
	return filepath.Join(dir, latest+".jsonl"), nil
}
