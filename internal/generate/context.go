package generate

import (
	"strconv"

	"mockgateway/internal/apierr"
)

// CheckContext rejects a request that does not fit the model's context window, in OpenAI's
// words: the prompt alone (promptTokens, from PromptTokens) when no budget was sent, or the
// prompt plus the requested budget (the request's max_completion_tokens or max_tokens) when one
// was. A window of zero or less means the model has none. Without a budget a prompt that fits
// is accepted however little room it leaves: each choice then stops at the window (see
// Input.ContextWindow), as a provider's model does. promptTokens is never negative (a count).
func CheckContext(promptTokens, budget, window int) *apierr.Error {
	// Compared as room left, not as a sum: a budget near the int's limit (an operator's
	// --max-tokens lets it through) must not wrap around to fit.
	if window <= 0 || promptTokens <= window && max(budget, 0) <= window-promptTokens {
		return nil // before the message is built: nearly every request fits (BenchmarkCheckContext)
	}
	head := "This model's maximum context length is " + strconv.Itoa(window) + " tokens. However, "
	if budget > 0 {
		// Both are at most the int's limit, so their sum fits in a uint64.
		return apierr.New(apierr.ContextLengthExceeded, "messages", head+"you requested "+
			strconv.FormatUint(uint64(promptTokens)+uint64(budget), 10)+" tokens ("+strconv.Itoa(promptTokens)+
			" in the messages, "+strconv.Itoa(budget)+" in the completion). "+
			"Please reduce the length of the messages or completion.")
	}
	return apierr.New(apierr.ContextLengthExceeded, "messages", head+"your messages resulted in "+
		strconv.Itoa(promptTokens)+" tokens. Please reduce the length of the messages.")
}
