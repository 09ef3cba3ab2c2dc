package model

// AnthropicErrorType is the `error.type` the Anthropic Messages API sends
// with an HTTP status: what brood's fake model answers with and what the
// headless JSON result reports (api_error_type), as Claude Code does.
func AnthropicErrorType(status int) string {
	switch status {
	case 400:
		return "invalid_request_error"
	case 401:
		return "authentication_error"
	case 403:
		return "permission_error"
	case 404:
		return "not_found_error"
	case 413:
		return "request_too_large"
	case 429:
		return "rate_limit_error"
	case 529:
		return "overloaded_error"
	}
	return "api_error"
}
