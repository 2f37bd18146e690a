import type { MiddlewareHandler } from 'hono';

// No request leaves the machine from the dashboard (docs/run-view.md "Nothing from other hosts"):
// bull-board's page links a public font host for its typeface, which breaks the page's look offline
// and tells that host who uses the dashboard, when, from where. The page is served without links to
// other hosts (its CSS falls back to the system's fonts), and every response carries a
// Content-Security-Policy that lets a browser fetch, connect or load from the dashboard's own origin
// only, so a link that a later bull-board adds is refused by the browser rather than followed.

/** Inline scripts and styles stay allowed: bull-board's loader and the run page's live script are inline. */
export const CONTENT_SECURITY_POLICY = [
  "default-src 'self' 'unsafe-inline' 'unsafe-eval' data: blob:",
  "base-uri 'self'",
  "form-action 'self'",
  "frame-ancestors 'none'",
].join('; ');

/** A `<link>` whose `href` is an absolute http(s) URL (a stylesheet, a font, a preconnect to another host). */
const REMOTE_LINK = /[ \t]*<link\b[^>]*\bhref\s*=\s*["']?(?:https?:)?\/\/[^>]*>[ \t]*\r?\n?/gi;

/** `html` without its links to other hosts. */
export function withoutRemoteLinks(html: string): string {
  return html.replace(REMOTE_LINK, '');
}

/** The middleware: the policy header on every response, remote links out of every HTML page. */
export function servedOffline(): MiddlewareHandler {
  return async (c, next) => {
    await next();
    c.header('Content-Security-Policy', CONTENT_SECURITY_POLICY);
    if (!c.res.headers.get('content-type')?.toLowerCase().startsWith('text/html')) return;
    const text = await c.res.text();
    const stripped = withoutRemoteLinks(text);
    const headers = new Headers(c.res.headers);
    headers.delete('content-length');
    c.res = new Response(stripped, { status: c.res.status, statusText: c.res.statusText, headers });
  };
}
