package delegate

import "context"

// Ask is a child's permission question (a Bash command or a write that no
// rule allows), on its way to the user. TaskID and Agent name the asking
// task as far as this process can tell: for a direct child they are the
// parent's own knowledge; for a nested ask they are what the relaying child
// says, and Via lists the tasks it came through (the direct child last).
type Ask struct {
	TaskID  string   `json:"task_id"`
	Agent   string   `json:"agent"`
	Via     []string `json:"via,omitempty"`
	Tool    string   `json:"tool"`
	Subject string   `json:"subject,omitempty"`
	// Rules are the narrowest permission rules that together would allow
	// the call, for an "always" answer.
	Rules []string `json:"rules,omitempty"`
}

// Answer is the user's answer to an Ask.
type Answer struct {
	Allow bool `json:"allow"`
	// Always is set when the user allowed the ask's Rules for good.
	Always bool `json:"always,omitempty"`
}

// AskFunc puts a child's question to the user and waits for the answer (or
// for ctx to end: a denial).
type AskFunc func(ctx context.Context, a Ask) Answer
