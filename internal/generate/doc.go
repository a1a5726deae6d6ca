// Package generate owns the deterministic output of the mock models and the usage estimator:
// given a validated request it produces each choice's content pieces or tool calls, its
// finish_reason, and the prompt and completion token counts — all at once (Generate) or, for a
// stream, prose piece by piece as it is sent (Prepare). It does no I/O and keeps no state
// beyond what it returns.
//
// # Determinism
//
// The output is a pure function of the model id, its [Behavior] and default length, and the
// request's messages, tools, tool_choice, parallel_tool_calls, response_format, n, stop, token
// budget and seed. Sampling fields have no effect. Nothing reads the clock, global random state
// or map order, so the same request gives the same bytes on every machine and run.
//
// A 32-byte request seed is the SHA-256 of a canonical, length-prefixed encoding of the model,
// the messages (role, name, content, tool_call_id, tool calls), the tools (name, description,
// parameters, strict), tool_choice (absent reads as auto with tools, none without),
// parallel_tool_calls, response_format (absent reads as text) and seed (or its absence). stop and
// the budget are not part of it: they only cut the output, so with a stop sequence or a smaller
// budget the answer is a prefix of the uncut one, word for word. Choice i draws from a ChaCha8
// stream (math/rand/v2, a specified algorithm) seeded with SHA-256(request seed, "choice", i), so
// the choices of one request differ; tool-call ids come from SHA-256(request seed, "call", i, k).
// A different seed or different messages give different words.
//
// # Pieces
//
// Output is a sequence of pieces, one token each; a stream sends one piece per delta.
//
//   - Text is split by [SplitPieces]: each piece is any leading whitespace plus one maximal run of
//     non-whitespace, and trailing whitespace is a piece of its own, so "echo: hello world" is
//     ["echo:", " hello", " world"]. Joining the pieces gives the text back exactly. Whitespace
//     here and in the usage rule is Unicode white space (unicode.IsSpace).
//   - JSON (tool arguments, json_object and json_schema content) is compact, and each structural
//     character { } [ ] , : is a piece, as is each whole string literal (quotes included),
//     number, true, false and null: {"city":"paris"} is ["{", "\"city\"", ":", "\"paris\"", "}"].
//
// # What each behavior writes
//
//   - echo (mock-echo): "echo: " + the content of the last user message ("echo:" when there is
//     none). The model's default length does not apply; only stop and the budget cut it.
//   - chat (mock-chat): exactly DefaultTokens pieces of prose from a fixed list of about 200
//     lowercase English words, in sentences of 6 to 14 words; a sentence's first word is
//     capitalized and its last one ends with "."; the final piece always ends a sentence (so the
//     last sentence may be shorter). Words are separated by single spaces, so every piece but the
//     first is " word" (punctuation belongs to the word: " river." is one piece).
//   - tools (mock-tools) plays every turn of an agent loop. With tools and tool_choice not
//     "none": a named tool_choice calls that function, every turn. Otherwise a turn is fresh
//     unless the request ends with tool results of which one answers a call (in the assistant
//     message before them) of a tool the request offers; a result of a tool not offered — a
//     handoff's transfer_to_… call, made by the agent before — leaves the turn fresh, and so
//     does a result whose call is not in the request. A fresh turn calls, when
//     parallel_tool_calls is not false and there are at least two tools, each tool once in
//     order, at most 3 calls; otherwise the first tool. After a result of an offered tool,
//     "auto" answers in prose and "required" calls the tools not yet called since the last
//     user message, in order (at most 3 with parallel calls, else the first of them), or the
//     last tool when every one has been called. Each call's arguments are a valid
//     instance of the tool's parameters schema ("{}" without one) and finish_reason is
//     "tool_calls". Otherwise the answer is prose like mock-chat's, DefaultTokens pieces long;
//     after a tool result it opens with the fixed lead "Based on the tool result," (5 pieces,
//     counted in the length, so a default length under 5 cuts the lead) and nothing of the
//     tool message is ever repeated.
//
// With response_format json_object, a text answer is {"echo":"<the echoed text without the
// 'echo: ' prefix>"} for mock-echo and {"answer":"<the prose>"} otherwise. With json_schema it is
// a valid instance of the schema (without a schema: like json_object). The default length never
// cuts JSON; the ceiling, stop and an explicit budget do, and then the JSON may be incomplete,
// as with OpenAI.
//
// # Ceiling, stop and budget
//
// Every choice has a ceiling, whatever the model, format and default length: at most
// Input.TokenCeiling pieces (--max-tokens, default 4096; lowered to what Input.ContextWindow
// leaves after the prompt) and at most an equal share of Input.MaxResponseBytes bytes of
// content or arguments (default DefaultMaxResponseBytes over n choices), because one piece (a
// string literal, a long word) can be any length. The output is generated up to the ceiling
// and no further, so the work is linear in what is shown, and cut there: the piece that
// crosses the byte ceiling is cut after its last whole character, which may cut JSON
// mid-value, and finish_reason is "length".
//
// Then, for text, the earliest occurrence of any non-empty stop string in what the ceiling kept
// cuts it: the pieces before it are kept unchanged, the piece containing it is truncated there
// (and dropped if nothing is left); finish_reason is "stop" (also when nothing was cut, unless
// the ceiling cut). Then the budget (max_completion_tokens, else max_tokens), when set, keeps
// at most that many pieces and, if it dropped any, sets "length". The ceiling depends only on
// the server's limits and n, not on stop or the budget, so those still cut one and the same
// text: a smaller budget gives a prefix. For tool calls, stop does not apply; the ceiling and
// the budget count argument fragments across the choice's calls in order, drop calls left
// without any fragment (the first call is always kept) and set "length".
//
// An echo answer draws nothing at random: every choice of it is the same, made once.
//
// # Made as it is read
//
// [Generate] makes every choice whole. [Prepare] gives the same answer for a response that
// sends it as it is made (a stream), but its prose choices are lazy: text answers of the chat
// behavior, and mock-tools' prose (after a tool result too), with no stop sequence. A lazy
// choice keeps only its position — its random stream and its sentence, a few hundred bytes —
// and [Choice.Next] makes its pieces one at a time, the same pieces, finish_reason and token
// count as Generate's, under the same ceiling and budget; so an open stream of n = 128 × 4096
// tokens holds kilobytes, not its answer, and its first chunk does not wait for the rest.
// Its finish_reason and tokens are known up front when the ceiling in bytes cannot cut it,
// else once it is read to its end or [Result.Settle] has read it there. JSON, tool calls, echo
// and text with stop sequences are made whole, as Generate makes them, within the ceiling.
//
// # Usage
//
// There is no provider tokenizer; [CountTokens] and [PromptTokens] are the documented rule:
//
//   - CountTokens(text) = sum over the whitespace-separated words of ceil(runes / 4): "" is 0,
//     "hello" is 2, "a b" is 2.
//   - prompt_tokens = 3 + for each message (4 + CountTokens(content) + CountTokens(name) + for
//     each of its tool calls CountTokens(function name) + CountTokens(arguments)) + for each tool
//     (8 + CountTokens(name) + CountTokens(description) + CountTokens(compact parameters JSON)),
//     plus what a Messages request's attachments add: [ImageTokens] per image, [PDFTokens] per
//     PDF, CountTokens of each plain-text or content document's and search result's text.
//   - completion_tokens = the pieces emitted over all choices (content pieces plus argument
//     fragments), which equals the number of content and argument deltas of the stream.
//
// # JSON Schema instances
//
// Tool arguments and json_schema answers are generated from the schema, deterministically from
// the choice's stream:
//
//   - type: a string, or an array of types of which the first that is not "null" is used;
//     without type, the keywords decide (properties → object, items → array, minLength →
//     string, minimum → number).
//   - const, and enum (a member matching the declared type), at any level.
//   - object: every member of properties, in the schema's order, required or not; required names
//     that properties does not describe (valued by additionalProperties when it is a schema);
//     extra members up to minProperties; optional members dropped from the end for
//     maxProperties. additionalProperties is otherwise ignored.
//   - array: prefixItems (or draft-7 tuple items) first, then items; max(minItems, 1) items, at
//     most maxItems; uniqueItems regenerates a duplicate up to 64 times, then drops it if minItems
//     allows.
//   - string: realistic values for the formats date-time, date, time (UTC), email, hostname,
//     uri/url/iri (https://example.com/…), uuid (v4), ipv4 (192.0.2.x), ipv6 (2001:db8::x),
//     duration, json-pointer, uri-template, regex; pattern is honored when it is a Go regular
//     expression built from literals, classes, groups, alternation and repetition, by walking
//     its syntax tree (a string of at most 16 KiB; a repetition stops where the ceiling cuts).
//     A pattern whose only assertions are anchors at its ends always matches what the walk
//     builds; any other candidate is checked with the compiled pattern, within per-request
//     budgets (65,536 compiled instructions, 2^22 match steps), and an unverified one is not
//     used. Otherwise one to three words padded or cut to minLength/maxLength.
//   - integer and number: minimum, maximum, exclusiveMinimum/exclusiveMaximum (numeric, and the
//     draft-4 boolean form), multipleOf, computed in exact rationals; an open side spans 100
//     from the other (0..100 when both are open); numbers have at most two decimals unless a
//     bound or multipleOf needs more.
//   - boolean, null; true and {} schemas give {} at the root and a word elsewhere; false gives
//     null (no instance exists).
//   - anyOf/oneOf: the first branch that is not just null (merged with the sibling keywords;
//     oneOf is not checked for exclusivity, so overlapping branches may fail it);
//     allOf: the merge of all branches (properties and required united, types intersected, the
//     tighter bounds); $ref: JSON pointers into the root schema ("#", "#/$defs/X",
//     "#/definitions/X"), merged with sibling keywords.
//   - Recursion: beyond 4 $ref hops an object writes only its required members, an array only
//     minItems items, and anyOf/oneOf prefer a null branch. Hard limits (nesting 48, 64 items,
//     4096 runes of minLength, 2^16 units of work per choice: schema nodes visited, members
//     copied by combinators, bytes rewritten by uniqueItems retries; 2^16 members copied to
//     resolve one node's $ref/allOf/anyOf/oneOf) keep any schema finite and cheap; a schema
//     that needs more gets a truncated, possibly invalid instance (valid JSON unless the
//     ceiling cut it). What is derived from a schema node (what it resolves to at each $ref
//     depth, its plan of members, the enum members of its type, its parsed patterns) is
//     computed once per request, so time is linear in the schema's size plus the output.
//     Unknown keywords are ignored, and not,
//     if/then/else, contains, patternProperties, propertyNames and dependencies are not
//     enforced. An undecodable schema is treated as absent.
//
// Editing the word list, the seed derivation or these rules changes every answer: do it on
// purpose and say so in the changelog.
package generate
