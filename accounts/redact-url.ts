/**
 * Store URLs in messages and logs. Its own module so that the Redis store and the
 * code that opens stores (open-store.ts, which loads the Redis store on demand) both
 * use it without importing each other.
 */

/** A URL fit for messages: a password in it is never printed. */
export function redactUrl(spec: string): string {
  try {
    const u = new URL(spec);
    if (u.password !== '') u.password = '***';
    return u.toString();
  } catch {
    return spec.replace(/\/\/[^@/]*@/, '//***@');
  }
}
