// The dashboard: one page at / on the admin listener, its stylesheet and its script, all held as
// strings in these modules (so `bun build --compile` embeds them and nothing is read from disk at
// run time). The page is a client of the JSON routes (see script.ts); it adds no state to the
// broker. The Content-Security-Policy lets it load only its own script and stylesheet and talk
// only to its own origin, so nothing on it can reach elsewhere, even through a bug in escaping.

import type { Hono } from "hono";
import { dashboardHtml } from "./page.ts";
import { dashboardJs } from "./script.ts";
import { dashboardCss } from "./style.ts";

export { dashboardCss, dashboardHtml, dashboardJs };

export const dashboardContentSecurityPolicy = [
  "default-src 'none'",
  "script-src 'self'",
  "style-src 'self'",
  "connect-src 'self'",
  "img-src 'self' data:",
  "base-uri 'none'",
  "form-action 'none'",
  "frame-ancestors 'none'",
].join("; ");

const commonHeaders = {
  "cache-control": "no-cache",
  "x-content-type-options": "nosniff",
  "referrer-policy": "no-referrer",
};

/** GET /, /dashboard.css and /dashboard.js on the admin app. */
export function mountDashboard(app: Hono): void {
  app.get("/", (c) =>
    c.body(dashboardHtml, 200, {
      ...commonHeaders,
      "content-type": "text/html; charset=utf-8",
      "content-security-policy": dashboardContentSecurityPolicy,
      "x-frame-options": "DENY",
    }));
  app.get("/dashboard.css", (c) => c.body(dashboardCss, 200, { ...commonHeaders, "content-type": "text/css; charset=utf-8" }));
  app.get("/dashboard.js", (c) => c.body(dashboardJs, 200, { ...commonHeaders, "content-type": "text/javascript; charset=utf-8" }));
}
