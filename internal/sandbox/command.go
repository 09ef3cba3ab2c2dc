package sandbox

import (
	"os/exec"
	"sync"
)

// Command is a process a child starts on its model's behalf (a Bash
// command, a stdio MCP server), started by StartCommand: confined as every
// tool process is, and waited for on the thread it was started from.
type Command struct {
	Cmd  *exec.Cmd
	once sync.Once
	done chan struct{}
	err  error
	// Held says what keeps it off the network ("" when it may use it).
	Held string
}

// Wait waits for the process to end and returns what cmd.Wait did; it may
// be called more than once.
func (c *Command) Wait() error {
	<-c.done
	return c.err
}

// Done is closed once the process has ended and been waited for.
func (c *Command) Done() <-chan struct{} { return c.done }

// StartCommand is the one launcher of a child's tool processes (Bash and
// the stdio MCP servers it starts): cmd starts from a throw-away OS thread
// that first drops what would let it read a sibling's /proc/PID/environ
// (NoIntrospectionForCommand) and, with noNetwork (`network: none`), takes
// the network from it and all it starts (NoNetworkForCommand); the
// process is in a group of its own and dies with that thread, which lives
// until the process has been waited for. The Landlock domain, syscall
// filter, cgroup and limits of the child are inherited as by anything it
// starts. An error means cmd did not start (a network that cannot be
// taken away refuses the start).
func StartCommand(cmd *exec.Cmd, noNetwork bool) (*Command, error) {
	return StartCommandWith(cmd, Walls{NoNetwork: noNetwork})
}

// Walls are what StartCommandWith takes from a tool process besides what
// every one loses.
type Walls struct {
	// NoNetwork: `network: none` (NoNetworkForCommand: no socket but
	// netlink, unix ones included).
	NoNetwork bool
	// NoUnixSockets: a child's tool process with network keeps no unix
	// sockets (NoUnixSocketsForCommand), unless the user's own settings
	// say sandbox.unix_sockets = true.
	NoUnixSockets bool
}

// StartCommandWith is StartCommand with the walls w.
func StartCommandWith(cmd *exec.Cmd, w Walls) (*Command, error) {
	c := &Command{Cmd: cmd, done: make(chan struct{})}
	setCommandAttr(cmd)
	started := make(chan error, 1)
	OnThrowawayThread(func() {
		defer close(c.done)
		err := NoIntrospectionForCommand()
		if err == nil {
			err = OwnProcessForCommand()
		}
		if err == nil && w.NoNetwork {
			c.Held, err = NoNetworkForCommand()
		} else if err == nil && w.NoUnixSockets {
			_, err = NoUnixSocketsForCommand()
		}
		if err == nil {
			err = cmd.Start()
		}
		started <- err
		if err != nil {
			c.err = err
			return
		}
		c.err = cmd.Wait()
	})
	if err := <-started; err != nil {
		return nil, err
	}
	return c, nil
}
