/**
 * Structured JSON logs with pino (chosen for its speed and its `redact` option). Keys and secrets never reach a
 * log line: the Authorization header and anything named like a secret are redacted at the source.
 */
import { pino, type Logger } from 'pino';

export type { Logger };

export function createLogger(level: string): Logger {
  return pino({
    level,
    base: { service: 'survey-service' },
    redact: {
      paths: [
        'authorization',
        'req.headers.authorization',
        '*.key',
        '*.secret',
        '*.password',
        'apiKey',
        'key',
        'secret',
      ],
      censor: '[redacted]',
    },
  });
}
