import { describe, expect, it } from 'vitest';
import { createFairShare } from '../../src/http/plugins/fair-share.ts';

/** An operation that ends when told, recording when it started. */
function gated(started: string[], name: string) {
  let end!: () => void;
  const ended = new Promise<void>((resolve) => (end = resolve));
  return { run: async () => (started.push(name), await ended, name), end };
}

const settle = () => new Promise((resolve) => setImmediate(resolve));

describe("a node's share of its work between keys", () => {
  it("runs a key's operations up to its bound, queues the next in order, refuses past the queue, and never holds another key", async () => {
    const share = createFairShare({ running: 2, waiting: 2, refuse: () => new Error('full') });
    const started: string[] = [];
    const ops = ['a1', 'a2', 'a3', 'a4'].map((name) => gated(started, name));
    const results = ops.map((op) => share.run('key-a', op.run));
    await expect(share.run('key-a', gated(started, 'a5').run)).rejects.toThrow('full');
    await settle();
    expect(started).toEqual(['a1', 'a2']);

    // Another key starts at once, whatever key-a has running or waiting.
    const b = gated(started, 'b1');
    const bResult = share.run('key-b', b.run);
    await settle();
    expect(started).toEqual(['a1', 'a2', 'b1']);

    // key-a's second operation ends first: its slot goes to the oldest waiting one.
    ops[1]!.end();
    await settle();
    expect(started).toEqual(['a1', 'a2', 'b1', 'a3']);
    ops[0]!.end();
    await settle();
    expect(started).toEqual(['a1', 'a2', 'b1', 'a3', 'a4']);
    ops[2]!.end();
    ops[3]!.end();
    b.end();
    expect(await Promise.all([...results, bResult])).toEqual(['a1', 'a2', 'a3', 'a4', 'b1']);

    // All ended: the key's bound is whole again.
    const again = ['a6', 'a7'].map((name) => gated(started, name));
    const later = again.map((op) => share.run('key-a', op.run));
    await settle();
    expect(started.slice(-2)).toEqual(['a6', 'a7']);
    again.forEach((op) => op.end());
    await Promise.all(later);
  });

  it('passes a failure through and frees the slot', async () => {
    const share = createFairShare({ running: 1, waiting: 0, refuse: () => new Error('full') });
    await expect(share.run('k', () => Promise.reject(new Error('engine down')))).rejects.toThrow('engine down');
    await expect(share.run('k', async () => 'next')).resolves.toBe('next');
  });
});
