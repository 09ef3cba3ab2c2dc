package compat_test

import (
	"regexp"
	"slices"
	"strings"
)

// The allowlist of differences between Claude Code 2.1.332's output and
// brood's, as docs/cli.md writes it down ("Differences from Claude Code
// 2.1.332"). Each entry is KIND KEY: KIND is "result", "stream" (KEY a
// kind of line) or a kind of stream line (system/init, assistant, ...);
// KEY a key path, * matching one path element.
var (
	// broodOnly are brood's additions.
	broodOnly = []string{
		"result transcript_path", "result unpriced_models", "result subagent_usage", "result subagent_usage.*",
		"result modelUsage.*.priced", "result model_usage_since_last_result.*.priced",
		"result subagent_stats.partial", "result subagent_stats.checkpoint", "result subagent_stats.refused.invalid",
		"system/init brood_version", "system/init transcript_path",
		"system/task_notification subagent_type", "system/task_notification brood_status",
		"system/task_notification tokens", "system/task_notification tokens.*",
		// brood's own block in its subagent hooks (task id, depth, status).
		"hook/SubagentStart brood", "hook/SubagentStart brood.*", "hook/SubagentStop brood", "hook/SubagentStop brood.*",
	}
	// claudeOnly are Claude Code's keys and lines brood does not print.
	claudeOnly = []string{
		// A result that follows a background subagent's notification.
		"result origin", "result origin.*",
		// Claude Code's own: its version, memory, socket and plugins.
		"system/init claude_code_version", "system/init memory_paths", "system/init memory_paths.*",
		"system/init messaging_socket_path", "system/init served_by_anthropic", "system/init plugins[].*",
		// brood has one run per task record: the task id is the key.
		"system/task_started run_id", "system/task_progress run_id", "system/task_updated run_id",
		"system/task_notification run_id", "system/background_tasks_changed tasks[].run_id",
		// How each call was permitted, and the model a subagent resolved to.
		"user tool_result_meta", "user tool_result_meta[].*", "user tool_result_meta[].permission_decision.*",
		"user (subagent) tool_result_meta", "user (subagent) tool_result_meta[].*", "user (subagent) tool_result_meta[].permission_decision.*",
		"user tool_use_result.resolvedModel",
		// An MCP tool's result: brood keeps the content, not the server's _meta.
		"user tool_use_result._meta", "user tool_use_result._meta.**",
		// Claude Code lists its running background subagents on Stop and
		// SubagentStop; brood's subagents here ran in the foreground (the
		// list is there, empty).
		"hook/Stop background_tasks[].*", "hook/SubagentStop background_tasks[].*",
	}
	// typeDiffers are keys whose value is of another JSON type in brood.
	typeDiffers = []string{}
	// valueDiffers are sameValue keys whose values differ in a story: under
	// --json-schema Claude Code's model answers through a StructuredOutput
	// tool call (stop_reason tool_use), brood's in text (end_turn).
	// At the turn cap Claude Code counts the turn it did not start
	// (num_turns 4 under --max-turns 3); brood counts the turns it ran.
	// With subagents Claude Code's last result follows their
	// notifications and counts the turns since the one before.
	// A failed model call: the error's wording is each program's own, and
	// Claude Code counts the turn that failed.
	// A web search is a WebSearch tool call in Claude Code (after a
	// ToolSearch that loads it: three turns), the provider's server tool
	// within one answer in brood.
	valueDiffers = []string{"json-schema stop_reason", "json-schema num_turns", "max-turns num_turns", "subagents num_turns",
		"api-error result", "api-error num_turns", "web-search num_turns"}
)

func allowed(list []string, kind, key string) bool {
	return slices.ContainsFunc(list, func(e string) bool {
		k, p, _ := cut(e)
		if k != kind {
			return false
		}
		if prefix, ok := strings.CutSuffix(p, ".**"); ok {
			return strings.HasPrefix(key, prefix+".")
		}
		re := "^" + strings.ReplaceAll(regexp.QuoteMeta(p), `\*`, `[^.]*`) + "$"
		return regexp.MustCompile(re).MatchString(key)
	})
}

// cut splits "KIND KEY" at its last space (a kind may hold a space:
// "assistant (subagent)").
func cut(e string) (kind, key string, ok bool) {
	for i := len(e) - 1; i >= 0; i-- {
		if e[i] == ' ' {
			return e[:i], e[i+1:], true
		}
	}
	return e, "", false
}
