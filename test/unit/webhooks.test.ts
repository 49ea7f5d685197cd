import { Webhook } from 'standardwebhooks';
import { describe, expect, it } from 'vitest';
import { deliveryRetryDelay, QUEUES, RetryDeliveryError } from '../../src/queues/registry.ts';
import { deliveryBatches, EVENTS_PER_DELIVERY_JOB } from '../../src/services/alerts/delivery-batches.ts';
import { createSecretBox, generateWebhookSecret } from '../../src/services/alerts/secret-box.ts';
import {
  checkWebhookUrl,
  isPublicAddress,
  RefusedWebhookAddress,
  resolveWebhookAddress,
} from '../../src/services/alerts/webhook-address.ts';
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

  it("back off by the attempts at the event to retry, not by its job's (a job of many events)", () => {
    // The job's sixth retry, but the first failure of the event now at its head: 5 s, not 160 s.
    expect(deliveryRetryDelay(6, new RetryDeliveryError('503', null, 1), () => 1)).toBe(5000);
    expect(deliveryRetryDelay(6, new RetryDeliveryError('503', null, 3), () => 1)).toBe(20_000);
    expect(deliveryRetryDelay(6, new RetryDeliveryError('503', null), () => 1)).toBe(160_000);
  });

  it('read Retry-After as seconds or an HTTP date', () => {
    const now = Date.parse('2026-11-26T10:00:00Z');
    expect(retryAfterMs('120', now)).toBe(120_000);
    expect(retryAfterMs('Thu, 26 Nov 2026 10:00:30 GMT', now)).toBe(30_000);
    expect(retryAfterMs('soon', now)).toBeNull();
    expect(retryAfterMs(undefined, now)).toBeNull();
  });
});

describe('delivery batches', () => {
  const deliveries = (endpoint: string, n: number, from = 0) =>
    Array.from({ length: n }, (_, i) => ({
      endpoint_id: endpoint,
      event_id: `evt_${endpoint}_${from + i}`,
      body: `{"id":"evt_${endpoint}_${from + i}"}`,
    }));
  const eventsOf = (jobs: ReturnType<typeof deliveryBatches>) =>
    jobs.flatMap((j) => j.job.events.map((e) => e.event_id));

  it('queue a lone event under its own id, as one job', () => {
    const [only, ...rest] = deliveryBatches(deliveries('whe_a', 1));
    expect(rest).toEqual([]);
    expect(only).toEqual({
      id: 'whe_a.evt_whe_a_0',
      job: { endpoint_id: 'whe_a', events: [{ event_id: 'evt_whe_a_0', body: '{"id":"evt_whe_a_0"}' }] },
    });
  });

  it('spread a few events over as many jobs as run at once, and many over jobs of at most 50, each event once and in order', () => {
    const few = deliveryBatches(deliveries('whe_a', 20));
    expect(few.map((j) => j.job.events.length)).toEqual([3, 3, 3, 3, 2, 2, 2, 2]);
    expect(QUEUES.webhooks.concurrency).toBe(8);
    expect(eventsOf(few)).toEqual(deliveries('whe_a', 20).map((d) => d.event_id));
    const many = deliveryBatches(deliveries('whe_a', 1001));
    expect(many).toHaveLength(21);
    expect(Math.max(...many.map((j) => j.job.events.length))).toBe(EVENTS_PER_DELIVERY_JOB - 2);
    expect(eventsOf(many)).toEqual(deliveries('whe_a', 1001).map((d) => d.event_id));
  });

  it('never mix endpoints in a job, and name a job by its events whatever their order', () => {
    const jobs = deliveryBatches([...deliveries('whe_a', 100), ...deliveries('whe_b', 3)]);
    expect(jobs.filter((j) => j.job.endpoint_id === 'whe_b').map((j) => j.id)).toEqual([
      'whe_b.evt_whe_b_0',
      'whe_b.evt_whe_b_1',
      'whe_b.evt_whe_b_2',
    ]);
    for (const { id, job } of jobs) {
      expect(id.startsWith(`${job.endpoint_id}.`)).toBe(true);
      for (const event of job.events) expect(event.event_id.startsWith(`evt_${job.endpoint_id}_`)).toBe(true);
    }
    // 16 events make 8 jobs of 2: swapping each pair's order keeps every job's id; other pairs change it.
    const sixteen = deliveries('whe_a', 16);
    const swapped = sixteen.map((_, i) => sixteen[i % 2 === 0 ? i + 1 : i - 1]!);
    const ids = deliveryBatches(sixteen).map((j) => j.id);
    expect(ids.every((id) => /^whe_a\.batch_[A-Za-z0-9_-]{27}$/.test(id))).toBe(true);
    expect(deliveryBatches(swapped).map((j) => j.id)).toEqual(ids);
    expect(new Set([...ids, ...deliveryBatches([...sixteen.slice(1), sixteen[0]!]).map((j) => j.id)]).size).toBe(16);
  });

  it('read a job of one event as queued before batches', () => {
    const legacy = { endpoint_id: 'whe_a', event_id: 'evt_1', body: '{}' };
    expect(QUEUES.webhooks.payload.parse(legacy)).toEqual({
      endpoint_id: 'whe_a',
      events: [{ event_id: 'evt_1', body: '{}' }],
    });
    expect(QUEUES.webhooks.payload.safeParse({ endpoint_id: 'whe_a', events: [] }).success).toBe(false);
  });
});
