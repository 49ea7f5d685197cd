import { Webhook } from 'standardwebhooks';
import { describe, expect, it } from 'vitest';
import {
  createSecretBox,
  generateWebhookSecret,
  SealedSecretUnreadable,
} from '../../src/services/alerts/secret-box.ts';
import {
  checkWebhookUrl,
  isPublicAddress,
  RefusedWebhookAddress,
  resolveWebhookAddress,
} from '../../src/services/alerts/webhook-address.ts';
import { backoffMs } from '../../src/services/alerts/webhook-delivery.ts';
import { retryAfterMs, signatureHeaders, signingKey } from '../../src/services/alerts/webhook-sender.ts';

describe('webhook addresses', () => {
  it('counts only public unicast addresses as public, IPv4-mapped IPv6 included', () => {
    for (const address of [
      '127.0.0.1',
      '10.0.0.8',
      '172.16.3.4',
      '192.168.1.1',
      '169.254.169.254',
      '100.64.0.1',
      '0.0.0.0',
      '::1',
      'fc00::1',
      'fe80::1',
      '::ffff:127.0.0.1',
      '::ffff:10.0.0.1',
    ])
      expect(isPublicAddress(address), address).toBe(false);
    for (const address of ['93.184.215.14', '1.1.1.1', '2606:4700:4700::1111', '::ffff:8.8.8.8'])
      expect(isPublicAddress(address), address).toBe(true);
  });

  it('refuses loopback, private and metadata addresses unless the operator allows them', () => {
    for (const url of [
      'https://127.0.0.1/x',
      'https://[::1]/x',
      'https://169.254.169.254/latest',
      'http://localhost:8080/x',
      'https://10.1.2.3/x',
    ])
      expect(() => checkWebhookUrl(url, false), url).toThrow(RefusedWebhookAddress);
    expect(checkWebhookUrl('http://127.0.0.1:9000/hooks', true).href).toBe('http://127.0.0.1:9000/hooks');
    expect(checkWebhookUrl('https://hooks.example.com/in', false).host).toBe('hooks.example.com');
    expect(() => checkWebhookUrl('http://hooks.example.com/in', true)).toThrow('expected an https URL');
  });

  // Names on this machine only (tests send nothing off it, DNS queries included).
  it('resolves each attempt and refuses a name that points inside the network', async () => {
    await expect(resolveWebhookAddress(new URL('https://localhost/x'), false)).rejects.toThrow(
      'resolves to a private or loopback address',
    );
    expect((await resolveWebhookAddress(new URL('http://localhost/x'), true)).address).toMatch(/^(127\.0\.0\.1|::1)$/);
  });
});

describe('webhook signatures', () => {
  it('sign id.timestamp.body so that the Standard Webhooks library verifies them, with every secret during a rotation', () => {
    const [a, b] = [generateWebhookSecret(), generateWebhookSecret()];
    const body = JSON.stringify({ id: 'evt_1', type: 'post.matched' });
    const headers = signatureHeaders({ id: 'evt_1', body, secrets: [a, b] }, new Date());
    expect(headers['webhook-id']).toBe('evt_1');
    expect(headers['webhook-signature']).toMatch(/^v1,[A-Za-z0-9+/]+=* v1,[A-Za-z0-9+/]+=*$/);
    expect(new Webhook(a).verify(body, headers)).toEqual(JSON.parse(body));
    expect(new Webhook(b).verify(body, headers)).toEqual(JSON.parse(body));
    expect(() => new Webhook(a).verify(body.replace('post', 'p0st'), headers)).toThrow();
  });

  it("are the library's own signatures, byte for byte, for any body (non-ASCII text included)", () => {
    const secret = generateWebhookSecret();
    const at = new Date('2026-11-28T12:00:00.999Z');
    for (const body of [
      '{}',
      JSON.stringify({ caption: 'café ☕ 東京 — “quoted” \u{1F525}', n: 1 }),
      'x'.repeat(70_000),
    ]) {
      const headers = signatureHeaders({ id: 'evt_2', body, secrets: [secret] }, at);
      expect(headers['webhook-timestamp']).toBe('1795867200');
      expect(headers['webhook-signature']).toBe(new Webhook(secret).sign('evt_2', at, body));
      // The key made once for a job's messages signs the same.
      expect(signatureHeaders({ id: 'evt_2', body, secrets: [signingKey(secret)] }, at)).toEqual(headers);
    }
  });

  it('keeps secrets sealed at rest: the keyring opens them, the current key seals them', () => {
    const secret = generateWebhookSecret();
    const first = 'one signing secret of enough length';
    const second = 'another signing secret, also long';
    const sealed = createSecretBox([first]).seal(secret);
    expect(sealed).not.toContain(secret.slice(6, 20));
    expect(createSecretBox([first]).open(sealed)).toEqual({ secret, stale: false });
    expect(() => createSecretBox([second]).open(sealed)).toThrow(SealedSecretUnreadable);
    // SIGNING_SECRET changed, the old one kept as SIGNING_SECRET_PREVIOUS: it opens, flagged to seal again.
    const keyring = createSecretBox([second, first]);
    expect(keyring.open(sealed)).toEqual({ secret, stale: true });
    expect(keyring.open(keyring.seal(secret))).toEqual({ secret, stale: false });
    expect(() => createSecretBox([first]).open(keyring.seal(secret))).toThrow(SealedSecretUnreadable);
  });
});

describe('delivery retries', () => {
  it('back an endpoint off by its failed turns, exponentially with jitter to an hour, never sooner than Retry-After', () => {
    expect(backoffMs(1, null, () => 0)).toBe(2500);
    expect(backoffMs(1, null, () => 1)).toBe(5000);
    expect(backoffMs(4, null, () => 1)).toBe(40_000);
    expect(backoffMs(30, null, () => 1)).toBe(3_600_000);
    expect(backoffMs(1, 30_000, () => 0)).toBe(30_000);
    expect(backoffMs(1, 86_400_000, () => 0)).toBe(3_600_000);
  });

  it('read Retry-After as seconds or an HTTP date', () => {
    const now = Date.parse('2026-11-26T10:00:00Z');
    expect(retryAfterMs('120', now)).toBe(120_000);
    expect(retryAfterMs('Thu, 26 Nov 2026 10:00:30 GMT', now)).toBe(30_000);
    expect(retryAfterMs('soon', now)).toBeNull();
    expect(retryAfterMs(undefined, now)).toBeNull();
  });
});
