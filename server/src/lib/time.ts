/** ISO 8601 UTC with `Z`, the only timestamp format of the API. */
export function iso(date: Date): string;
export function iso(date: Date | null): string | null;
export function iso(date: Date | null): string | null {
  return date === null ? null : date.toISOString();
}
