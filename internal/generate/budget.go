package generate

import (
	"strconv"

	"mockgateway/internal/apierr"
)

// CheckBudget rejects a budget over the model's output limit (limit, the catalog's
// max_output_tokens) in OpenAI's words less the figure the client sent: param is the member the
// budget came from (max_tokens, max_completion_tokens, or the Responses API's
// max_output_tokens, whose limit OpenAI calls output tokens). A budget of zero (none sent) or a
// limit of zero (none known) passes. The only figure in the message is the model's limit, so
// nothing the client sent comes back in it.
func CheckBudget(param string, budget, limit int) *apierr.Error {
	if limit <= 0 || budget <= limit {
		return nil
	}
	kind := " completion tokens."
	if param == "max_output_tokens" {
		kind = " output tokens."
	}
	return apierr.New(apierr.InvalidValue, param, param+" is too large. This model supports at most "+
		strconv.Itoa(limit)+kind)
}

// CheckAnthropicBudget is CheckBudget in Anthropic's words, which name the model and, like
// CheckBudget, leave out the budget sent.
func CheckAnthropicBudget(budget, limit int, model string) *apierr.Error {
	if limit <= 0 || budget <= limit {
		return nil
	}
	return apierr.New(apierr.InvalidValue, "max_tokens", "max_tokens: the maximum allowed number of output tokens for "+
		model+" is "+strconv.Itoa(limit))
}
