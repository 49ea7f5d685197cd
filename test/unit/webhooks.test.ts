import { Webhook } from 'standardwebhooks';
import { describe, expect, it } from 'vitest';
import { deliveryRetryDelay, RetryDeliveryError } from '../../src/queues/registry.ts';
import { createSecretBox, generateWebhookSecret } from '../../src/services/alerts/secret-box.ts';
import {
  checkWebhookUrl,
  isPublicAddress,
  RefusedWebhookAddress,
  resolveWebhookAddress,
} from '../../src/services/alerts/webhook-address.ts';
import { retryAfterMs, signatureHeaders } from '../../src/services/alerts/webhook-sender.ts';

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

  it('keeps secrets sealed at rest: only the same SIGNING_SECRET opens them', () => {
    const secret = generateWebhookSecret();
    const sealed = createSecretBox('one signing secret of enough length').seal(secret);
    expect(sealed).not.toContain(secret.slice(6, 20));
    expect(createSecretBox('one signing secret of enough length').open(sealed)).toBe(secret);
    expect(() => createSecretBox('another signing secret, also long').open(sealed)).toThrow();
  });
});

describe('delivery retries', () => {
  it('back off exponentially with jitter to an hour, never sooner than Retry-After', () => {
    expect(deliveryRetryDelay(1, new Error('x'), () => 0)).toBe(2500);
    expect(deliveryRetryDelay(1, new Error('x'), () => 1)).toBe(5000);
    expect(deliveryRetryDelay(4, new Error('x'), () => 1)).toBe(40_000);
    expect(deliveryRetryDelay(30, new Error('x'), () => 1)).toBe(3_600_000);
    expect(deliveryRetryDelay(1, new RetryDeliveryError('503', 30_000), () => 0)).toBe(30_000);
    expect(deliveryRetryDelay(1, new RetryDeliveryError('503', 86_400_000), () => 0)).toBe(3_600_000);
  });

  it('read Retry-After as seconds or an HTTP date', () => {
    const now = Date.parse('2026-11-26T10:00:00Z');
    expect(retryAfterMs('120', now)).toBe(120_000);
    expect(retryAfterMs('Thu, 26 Nov 2026 10:00:30 GMT', now)).toBe(30_000);
    expect(retryAfterMs('soon', now)).toBeNull();
    expect(retryAfterMs(undefined, now)).toBeNull();
  });
});
