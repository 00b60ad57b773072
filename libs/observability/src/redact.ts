/**
 * The one redaction list for every log line: keys, secrets and credentials never reach a log sink.
 * pino paths; `*` matches one level.
 */
export const REDACT_PATHS: string[] = [
  'req.headers.authorization',
  'req.headers.cookie',
  'req.headers["x-api-key"]',
  'headers.authorization',
  'authorization',
  'key',
  'apiKey',
  'secrets',
  'secretValues',
  '*.key',
  '*.apiKey',
  '*.secrets',
  '*.secretValues',
  '*.password',
  '*.token',
  'body.secrets',
  'req.body.secrets',
];
