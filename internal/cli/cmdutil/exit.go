package cmdutil

import (
	"errors"
	"fmt"
	"strings"
)

// Exit statuses. They are brood's contract with scripts: `brood --help`
// lists them, docs/cli.md explains them.
const (
	ExitOK         = 0   // the run (or command) did what was asked
	ExitFailed     = 1   // it failed: the model could not be reached, a task failed or failed verification
	ExitUsage      = 2   // the command line was wrong: unknown flag or command, a bad value, a missing argument
	ExitPartial    = 3   // the turn cap stopped the run; it can be continued
	ExitCheckpoint = 4   // a subagent stopped at a checkpoint (it asks for a decision)
	ExitKilled     = 5   // a subagent's process was killed (lifeguard, timeout, or brood tasks kill)
	ExitInterrupt  = 130 // interrupted (Ctrl-C, SIGTERM); the run stays resumable
	ExitBrokenPipe = 141 // stdout's reader went away (brood ... | head): 128+SIGPIPE, nothing printed
)

// ExitStatusHelp is the table `brood --help` prints.
const ExitStatusHelp = `Exit status:
  0    done
  1    failed (the model could not be reached, a task failed, failed verification or was rejected);
       brood -p / brood run also at the turn cap, as claude -p
  2    usage error (unknown flag or command, bad value, missing argument)
  3    partial: the turn cap stopped the task (brood subagent, brood tasks resume; brood -p
       with --brood-exit-codes); continue it with --continue
  4    checkpoint: a subagent stopped to ask for a decision
  5    killed: a subagent's process was killed
  130  interrupted (Ctrl-C); the run stays resumable
  141  stdout's reader went away (brood ... | head); nothing more is printed`

// ExitError carries an exit status through cobra without printing twice.
type ExitError struct {
	Code int
	Err  error
}

func (e *ExitError) Error() string {
	if e.Err == nil {
		return ""
	}
	return e.Err.Error()
}

func (e *ExitError) Unwrap() error { return e.Err }

// ExitCode wraps err so that Main exits with code. A nil err means "already
// reported".
func ExitCode(code int, err error) error { return &ExitError{Code: code, Err: err} }

// UsageError is a wrong command line: Main exits with ExitUsage.
func UsageError(format string, args ...any) error {
	return &ExitError{Code: ExitUsage, Err: fmt.Errorf(format, args...)}
}

// StatusCode maps how a task or run ended (done, partial, checkpoint,
// failed, killed, cancelled) to its exit status.
func StatusCode(status string) int {
	switch strings.ToLower(status) {
	case "", "done":
		return ExitOK
	case "partial":
		return ExitPartial
	case "checkpoint":
		return ExitCheckpoint
	case "killed":
		return ExitKilled
	case "cancelled":
		return ExitInterrupt
	}
	return ExitFailed
}

// IsUsage reports whether err is a usage error, including cobra's own
// (unknown command, wrong number of arguments), which carry no type.
func IsUsage(err error) bool {
	var ee *ExitError
	if errors.As(err, &ee) {
		return ee.Code == ExitUsage
	}
	msg := err.Error()
	for _, p := range []string{"unknown command ", "unknown flag", "unknown shorthand flag", "accepts ", "requires at least ", "requires at most ", "invalid argument ", "flag needs an argument", "bad flag syntax"} {
		if strings.HasPrefix(msg, p) {
			return true
		}
	}
	return false
}
