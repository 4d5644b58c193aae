/**
 * Scope arithmetic. Scopes are `resource:action`; `resource:*` grants every action of a resource and `*`
 * grants everything.
 */
export function grants(granted: readonly string[], required: string): boolean {
  if (granted.includes('*') || granted.includes(required)) return true;
  const resource = required.split(':')[0];
  return required !== '*' && granted.includes(`${resource}:*`);
}

/** The requested scopes that `granted` does not cover (a key may never mint a key with more power). */
export function uncovered(granted: readonly string[], requested: readonly string[]): string[] {
  return requested.filter((scope) => {
    if (scope === '*') return !granted.includes('*');
    if (scope.endsWith(':*')) return !granted.includes('*') && !granted.includes(scope);
    return !grants(granted, scope);
  });
}
