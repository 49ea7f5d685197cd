import type { FastifyInstance } from 'fastify';

/** A page as a browser gets it. */
export interface Page {
  status: number;
  headers: Record<string, string | string[] | number | undefined>;
  body: string;
  /** Where a redirect points (path), if it is one. */
  location: string | undefined;
}

/**
 * A minimal browser for the dashboard over `app.inject`: keeps the session cookie, reads the
 * CSRF token from the last page, and submits forms as `application/x-www-form-urlencoded`.
 */
export class DashboardClient {
  private cookie: string | undefined;
  lastPage: Page | undefined;

  constructor(private readonly app: FastifyInstance) {}

  /** The session cookie's value (`name=value`), to hand to another client or node. */
  get sessionCookie(): string | undefined {
    return this.cookie;
  }

  set sessionCookie(value: string | undefined) {
    this.cookie = value;
  }

  /** The CSRF token of the last page's first form. */
  get csrf(): string {
    const match = /name="_csrf" value="([^"]+)"/.exec(this.lastPage?.body ?? '');
    if (!match?.[1]) throw new Error('no CSRF token on the last page');
    return match[1];
  }

  /** `headers`: what a browser adds (e.g. `sec-fetch-site`). */
  async get(path: string, headers: Record<string, string> = {}): Promise<Page> {
    return this.send('GET', path, undefined, headers);
  }

  /** Posts `fields`; the CSRF token of the last page is added unless `_csrf` is given (null: none). */
  async post(
    path: string,
    fields: Record<string, string | string[]>,
    csrf: string | null | undefined = undefined,
  ): Promise<Page> {
    const form = new URLSearchParams();
    const token = csrf === undefined ? this.csrf : csrf;
    if (token !== null) form.append('_csrf', token);
    for (const [name, value] of Object.entries(fields)) for (const v of [value].flat()) form.append(name, v);
    return this.send('POST', path, form.toString());
  }

  private async send(
    method: 'GET' | 'POST',
    path: string,
    payload?: string,
    extra: Record<string, string> = {},
  ): Promise<Page> {
    const response = await this.app.inject({
      method,
      url: path,
      headers: {
        // As the TLS-terminating proxy in front of the service says (TRUSTED_PROXIES): the session
        // cookie is Secure when PUBLIC_BASE_URL is https, and is only set on an https request.
        'x-forwarded-proto': 'https',
        ...(this.cookie ? { cookie: this.cookie } : {}),
        ...(payload !== undefined ? { 'content-type': 'application/x-www-form-urlencoded' } : {}),
        ...extra,
      },
      ...(payload !== undefined ? { payload } : {}),
    });
    const setCookie = [response.headers['set-cookie'] ?? []].flat();
    for (const c of setCookie) {
      const pair = String(c).split(';')[0]!;
      this.cookie = /=$/.test(pair) || /Expires=Thu, 01 Jan 1970/.test(String(c)) ? undefined : pair;
    }
    const page: Page = {
      status: response.statusCode,
      headers: response.headers,
      body: response.body,
      location: response.headers.location,
    };
    if (response.headers['content-type']?.toString().startsWith('text/html')) this.lastPage = page;
    return page;
  }
}
