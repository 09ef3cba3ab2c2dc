package cli

import "github.com/spf13/cobra"

// addTaskActions adds the verbs that act on a task: output, resume, kill, send.
func addTaskActions(tasks *cobra.Command, app *App) {}
