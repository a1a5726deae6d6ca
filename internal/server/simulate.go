package server

import (
	"context"
	"net/http"
	"strconv"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/trace"

	"mockgateway/internal/apierr"
	"mockgateway/internal/catalog"
	"mockgateway/internal/dialect"
	"mockgateway/internal/fixtures"
	"mockgateway/internal/simulation"
	"mockgateway/internal/state"
	"mockgateway/observability"
)

// simulated is what the simulation decided for one chat request.
type simulated struct {
	plan    simulation.Plan
	latency simulation.Latency
	served  *catalog.Model // the model that answers: the requested one or a fallback
	attempt int            // this request's number in its attempts (1: a first try)
	// held is what the call holds of its models' simulated quota and capacity until it ends
	// (finish); nil for a model with neither. One pointer: the decision stays in its size class.
	held *held
}

// simulator decides what the simulation does to a chat request.
type simulator struct {
	headers       bool // --allow-simulation-headers: the x-mock-* headers are read
	catalog       *catalog.Catalog
	attempts      state.Store
	streamTimeout time.Duration // what a sleeping gateway policy may sleep in all
}

// decide reads the x-mock-* headers (when allowed) over the fixture's or the model's settings
// and decides the plan. A malformed header is a 400 naming the header, never a silent default. bodyHash
// identifies the request for clients that retry without saying so (attemptOf); spent is how
// many of the model's gateway retries its quota's refusal already took (quotaGateway).
//
// The decision comes back on the heap: returned by value, it and its copies took 440 of the
// chat handler's 700-byte frame, which every open stream keeps under it (TestBlockedStreamStack).
func (s simulator) decide(r *http.Request, model *catalog.Model, bodyHash uint64, hit *fixtures.Hit, spent int) (*simulated, error) {
	fault, latency := model.FaultSpec, model.Latency
	latencyFromHeader := false
	if hit != nil {
		// A fixture's error and latency take the place of the model's; a header still wins.
		if hit.Reply.Error != nil {
			fault = hit.Reply.Error
		}
		if hit.Reply.Latency != nil {
			latency, latencyFromHeader = *hit.Reply.Latency, true
		}
	}
	if s.headers {
		if v := r.Header.Get(simulation.HeaderFault); v != "" {
			f, err := simulation.ParseFault(v)
			if err != nil {
				return nil, invalidHeader(simulation.HeaderFault, err)
			}
			fault = &f
		}
		if v := r.Header.Get(simulation.HeaderLatency); v != "" {
			l, err := simulation.ParseLatency(v)
			if err != nil {
				return nil, invalidHeader(simulation.HeaderLatency, err)
			}
			latency, latencyFromHeader = l, true
		}
	}
	attempt, key, err := s.attemptOf(r, model, fault, bodyHash)
	if err != nil {
		return nil, err
	}
	done := simulation.Progress{Retries: spent}
	if g := model.Gateway; spent > 0 && g.SleepBackoff {
		// Its quota's retries slept already: what its fault's may sleep is what is left of the
		// request's stream timeout, one bound for all. A fault's plan alone sleeps once, within it
		// (chatHandler.wait).
		done.Left = max(time.Until(observability.RecordFrom(r.Context()).Start.Add(s.streamTimeout)), time.Nanosecond)
	}
	plan := simulation.Decide(model.ID, fault, attempt, model.Gateway, s.catalog.Target, done)
	if key != 0 && plan.Fault == nil {
		s.attempts.AttemptDone(r.Context(), key, observability.RecordFrom(r.Context()).Scope) // it got through: an identical request later is a first try again
	}
	served := model
	if plan.ServedBy != model.ID {
		if m, ok := s.catalog.Lookup(plan.ServedBy); ok {
			served = m
			// A fallback serves with its own latency, unless a header chose the latency.
			if !latencyFromHeader {
				latency = m.Latency
			}
		}
	}
	return &simulated{plan: plan, latency: latency, served: served, attempt: max(attempt, 1)}, nil
}

// attemptOf numbers this attempt of the request for "fail the first K attempts". A client that
// says which attempt it is — x-mock-attempt, or an x-stainless-retry-count above 0 from an
// official SDK retrying — is taken at its word. Otherwise the attempt is counted by a key: a
// hash of the body, the model and the fault header, since a retry resends the same request.
// That covers clients that retry on their own (LangChain, the Vercel AI SDK, go-openai, …);
// LangChain JS sends x-stainless-retry-count: 0 on each of its own retries (it turns the SDK's
// retries off), so 0 is no proof of a first try. key is 0 when the request has no key.
func (s simulator) attemptOf(r *http.Request, model *catalog.Model, fault *simulation.Fault, bodyHash uint64) (attempt int, key uint64, _ *apierr.Error) {
	h := r.Header
	if !s.headers {
		// Only the SDKs' own counter: the header that would name an attempt is not allowed.
		h = http.Header{simulation.HeaderRetryCount: r.Header[simulation.HeaderRetryCount]}
	}
	attempt, err := simulation.AttemptOf(h)
	if err != nil {
		return 0, 0, invalidHeader(simulation.HeaderAttempt, err)
	}
	// A gateway policy makes its own attempts within one request; without "first K" there is
	// nothing to count; x-mock-attempt is the test's own word.
	if h.Get(simulation.HeaderAttempt) != "" || fault == nil || fault.Attempts <= 0 || model.Gateway != nil {
		return attempt, 0, nil
	}
	key = bodyHash
	// The scope too: parallel tests that send the same request in different scopes each count
	// their own attempts.
	scope := observability.RecordFrom(r.Context()).Scope
	for _, v := range [...]string{model.ID, r.Header.Get(simulation.HeaderFault), scope} {
		key = dialect.HashString(key^uint64(len(v)), v)
	}
	key |= 1 // never 0, which means "not counted"
	if attempt > 1 {
		// An SDK's retry, counted by the SDK; the key is still returned, so that its success
		// forgets the first try the counter saw.
		return attempt, key, nil
	}
	n, err := s.attempts.NextAttempt(r.Context(), key, scope)
	if err != nil {
		return 0, 0, stateError(err)
	}
	return n, key, nil
}

func invalidHeader(name string, err error) *apierr.Error {
	// err's text is ours (ParseFault/ParseLatency never quote the value).
	return apierr.New(apierr.InvalidSimulationHeader, http.CanonicalHeaderKey(name), "The "+http.CanonicalHeaderKey(name)+" header is malformed: "+err.Error()+".")
}

// reportPlan makes a gateway policy's decision visible in every signal: response headers, span
// events marked simulated=true, metrics, and the access log (through the Record).
func reportPlan(ctx context.Context, w http.ResponseWriter, span trace.Span, metrics *observability.Metrics, requested string, s *simulated) {
	p := s.plan
	if !p.Policy {
		return
	}
	if p.FallbackFrom != "" {
		requested = p.FallbackFrom // a quota's fallback: the handler goes on with the model it landed on
	}
	rec := observability.RecordFrom(ctx)
	rec.GatewayAttempts, rec.ServedBy, rec.FallbackFrom = p.Attempts, p.ServedBy, p.FallbackFrom
	h := w.Header()
	h.Set("X-Mock-Gateway-Attempts", strconv.Itoa(p.Attempts))
	h.Set("X-Mock-Gateway-Served-By", p.ServedBy)
	if p.FallbackFrom != "" {
		h.Set("X-Mock-Gateway-Fallback-From", p.FallbackFrom)
	}
	for _, st := range p.Steps {
		switch st.Kind {
		case "retry":
			metrics.ObserveRetries(ctx, requested, st.Cause, 1) // a quota's retries and a fault's may share a plan
			span.AddEvent("gateway.retry", trace.WithAttributes(
				attribute.Bool("simulated", true),
				attribute.Int("mockgateway.gateway.attempt", st.Attempt),
				attribute.Int64("mockgateway.gateway.backoff_ms", st.Backoff.Milliseconds()),
			))
		case "fallback":
			reason := "served"
			if st.Skipped {
				reason = "metadata_only_not_executed"
			}
			span.AddEvent("gateway.fallback", trace.WithAttributes(
				attribute.Bool("simulated", true),
				attribute.String("mockgateway.gateway.from", requested),
				attribute.String("mockgateway.gateway.to", st.To), // a catalog id (the catalog checks its fallbacks)
				attribute.String("mockgateway.gateway.result", reason),
			))
			metrics.ObserveFallback(ctx, requested, st.To)
		}
	}
	span.SetAttributes(
		attribute.Int("mockgateway.gateway.attempts", p.Attempts),
		attribute.String("mockgateway.gateway.served_by", p.ServedBy),
	)
}

// recordFault makes one served fault visible: counted, a span event, and the access log field.
func recordFault(ctx context.Context, span trace.Span, metrics *observability.Metrics, model string, kind string) {
	observability.RecordFrom(ctx).Fault = kind
	metrics.ObserveFault(ctx, model, kind)
	span.AddEvent("simulation.fault", trace.WithAttributes(
		attribute.Bool("simulated", true),
		attribute.String("mockgateway.simulation.fault", kind),
	))
}

// faultError is the error a simulated fault answers with (a timeout has waited first; a
// mid-stream error on a request that does not stream is an error too). faultHeaders sets the
// headers OpenAI sends beside it.
func faultError(f *simulation.Fault) *apierr.Error {
	var e *apierr.Error
	switch f.Kind {
	case simulation.RateLimit:
		e = apierr.New(apierr.SimulatedRateLimit, "", "Simulated rate limit: this mock was asked to answer 429 for this attempt. Nothing real was limited.")
	case simulation.ServerError:
		e = apierr.New(apierr.SimulatedServerError, "", "Simulated server error: this mock was asked to fail this attempt. Nothing real failed.")
	case simulation.Unavailable:
		e = apierr.New(apierr.SimulatedUnavailable, "", "Simulated unavailability: this mock was asked to answer this attempt as unavailable (503; 529 overloaded in the Anthropic dialect). Nothing real is down.")
	case simulation.Timeout:
		e = apierr.New(apierr.SimulatedTimeout, "", "Simulated timeout: this mock stalled as asked, then gave up. Nothing real timed out.")
	default: // simulation.StreamError
		e = apierr.New(apierr.SimulatedStreamError, "", "Simulated mid-stream error, on a request that does not stream. Nothing real failed.")
	}
	e.RetryAfter = f.RetryAfter
	return e
}

// faultHeaders sets the headers of a simulated rate limit or unavailability, in OpenAI's
// formats: Retry-After in whole seconds (at least 1 when there is a wait), Retry-After-Ms, and
// for a rate limit the x-ratelimit-* headers of an exhausted request budget.
func faultHeaders(h http.Header, e *apierr.Error) {
	secs := int(e.RetryAfter.Round(time.Second) / time.Second)
	switch e.Code {
	case apierr.SimulatedRateLimit:
		if e.RetryAfter > 0 && secs == 0 {
			secs = 1
		}
		h.Set("Retry-After", strconv.Itoa(secs))
		h.Set("Retry-After-Ms", strconv.FormatInt(e.RetryAfter.Milliseconds(), 10))
		h.Set("X-Ratelimit-Limit-Requests", "60")
		h.Set("X-Ratelimit-Remaining-Requests", "0")
		h.Set("X-Ratelimit-Reset-Requests", durationHeader(e.RetryAfter))
		h.Set("X-Ratelimit-Limit-Tokens", "150000")
		h.Set("X-Ratelimit-Remaining-Tokens", "150000")
		h.Set("X-Ratelimit-Reset-Tokens", "0s")
	case apierr.SimulatedUnavailable:
		h.Set("Retry-After", strconv.Itoa(max(1, secs)))
		h.Set("Retry-After-Ms", strconv.FormatInt(e.RetryAfter.Milliseconds(), 10))
	}
}

// durationHeader writes a duration the way OpenAI's x-ratelimit-reset-* headers do ("1s",
// "6m0s", "20ms").
func durationHeader(d time.Duration) string {
	if d < time.Second {
		return strconv.FormatInt(d.Milliseconds(), 10) + "ms"
	}
	return d.Round(time.Second).String()
}

// cutConnection drops the connection mid-response, as a failing network or gateway would: the
// client sees an unexpected end of the body, not a clean finish.
func cutConnection(w http.ResponseWriter) {
	rc := http.NewResponseController(w)
	_ = rc.Flush()
	conn, _, err := rc.Hijack()
	if err != nil {
		panic(http.ErrAbortHandler) // HTTP/2: resetting the stream is the way to cut it
	}
	_ = conn.Close()
}
