// dialects.js: the dialect a call spoke, by the route the journal records (the route template,
// never the path sent). One row per dialect, with every route it answers on; a route of no
// dialect (the model list, which answers in either shape) has none.

export const DIALECTS = [
  { name: 'OpenAI Chat Completions', routes: ['/v1/chat/completions'] },
  { name: 'OpenAI Responses', routes: ['/v1/responses'] },
  { name: 'Anthropic Messages', routes: ['/v1/messages', '/v1/messages/count_tokens'] },
  {
    name: 'Google Gemini',
    routes: ['/v1beta', '/v1'].flatMap((v) => ['generateContent', 'streamGenerateContent', 'countTokens']
      .map((m) => `${v}/models/{model}:${m}`)).concat(['/v1beta/models', '/v1beta/models/{model}']),
  },
];

const byRoute = new Map(DIALECTS.flatMap((d) => d.routes.map((r) => [r, d.name])));

// dialectOf names the dialect of a journal entry, '' when its route is of none.
export function dialectOf(entry) {
  return byRoute.get(entry.route) || '';
}
