/** GET /api/v1/me: who the calling key is and how much of its budget is left. */
import type { Handler } from '../../http/index.js';

export const getMe: Handler<'getMe'> = async ({ auth, deps }) => {
  const windows = await deps.rateLimits.peek(auth);
  const status = (w: (typeof windows)['minute']) => ({
    limit: w.limit,
    remaining: w.remaining,
    resetAt: new Date(Date.now() + w.resetSeconds * 1000).toISOString(),
  });
  return {
    status: 200,
    data: {
      organization: { id: auth.organizationId, name: auth.organizationName, plan: auth.plan },
      environment: auth.environment,
      apiKey: {
        id: auth.apiKeyId,
        name: auth.apiKeyName,
        scopes: auth.scopes as never,
        expiresAt: auth.expiresAt ? auth.expiresAt.toISOString() : null,
      },
      rateLimits: { minute: status(windows.minute), day: status(windows.day) },
    },
  };
};
