// What every suite here shares: the service's root URL (the Anthropic clients add /v1
// themselves), the per-test timeout, and the weather tool's schema.

const url = process.env.MOCKGATEWAY_URL;
if (!url || !/^https?:\/\/[^/]+\/?$/.test(url)) {
  throw new Error('MOCKGATEWAY_URL must be the service\'s root URL, e.g. http://127.0.0.1:8080 (got ' + JSON.stringify(url) + ')');
}

export const BASE_URL = url.replace(/\/$/, '');
export const TIMEOUT = 30_000; // per test; nothing here should take more than a second or two

export const WEATHER_SCHEMA = {
  type: 'object',
  properties: { city: { type: 'string', description: 'City name' }, unit: { type: 'string', enum: ['celsius', 'fahrenheit'] } },
  required: ['city', 'unit'],
  additionalProperties: false,
};
