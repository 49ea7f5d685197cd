/**
 * The benches' command line: a typed wrapper over `node:util` `parseArgs`. Options and positionals
 * are declared once with their kind and default; numbers are checked (integer, lower bound), a bad
 * or unknown argument prints what is wrong and the usage line and exits 2, `--help` prints the
 * usage line and exits 0.
 *
 *   const args = cli({ positionals: [{ name: 'requests', type: 'int', default: 300, min: 1 }],
 *                      options: { label: { type: 'string' }, dist: { type: 'boolean' } } });
 *   args.requests; // number
 */
import path from 'node:path';
import { parseArgs } from 'node:util';

/** The kind of one argument: its value is a string, a flag, a repeated string, an integer or a number. */
export type ArgKind = 'string' | 'boolean' | 'list' | 'int' | 'number';

/** One option (`--name value`) or positional. */
export interface ArgSpec {
  type: ArgKind;
  default?: string | number | boolean | readonly string[];
  /** Lowest value a number may take (e.g. 1 for a positive count). */
  min?: number;
  /** The only values a string may take. */
  choices?: readonly string[];
  short?: string;
}

/** A positional argument, in order. */
export interface PositionalSpec extends ArgSpec {
  name: string;
  /** May be left out though it has no default (its value is then undefined). */
  optional?: boolean;
}

type ValueOf<S extends ArgSpec> = S['type'] extends 'boolean'
  ? boolean
  : S['type'] extends 'list'
    ? string[]
    : S['type'] extends 'int' | 'number'
      ? S extends { default: number }
        ? number
        : number | undefined
      : S extends { default: string }
        ? string
        : string | undefined;

/** The parsed values: one property per option and positional, typed by its kind and default. */
export type Args<O extends Record<string, ArgSpec>, P extends readonly PositionalSpec[]> = {
  [K in keyof O]: ValueOf<O[K]>;
} & { [S in P[number] as S['name']]: ValueOf<S> };

const script = () => path.relative(process.cwd(), process.argv[1] ?? 'bench') || 'bench';

function usageLine(options: Record<string, ArgSpec>, positionals: readonly PositionalSpec[]): string {
  const words = positionals.map((p) =>
    p.default === undefined && !p.choices && !p.optional
      ? `<${p.name}>`
      : `[${p.choices ? p.choices.join('|') : p.name}]`,
  );
  for (const [name, spec] of Object.entries(options)) {
    if (spec.type === 'boolean') words.push(`[--${name}]`);
    else {
      const shown = spec.default !== undefined && !Array.isArray(spec.default) ? String(spec.default) : null;
      const value = spec.choices?.join('|') ?? (spec.type === 'int' || spec.type === 'number' ? 'n' : 'value');
      words.push(`[--${name} ${shown ? `${value}, default ${shown}` : value}${spec.type === 'list' ? ' …' : ''}]`);
    }
  }
  return `usage: npx tsx ${script()} ${words.join(' ')}`.trimEnd();
}

function exit2(message: string): never {
  process.stderr.write(`${script()}: ${message}\n`);
  process.exit(2);
}

function numberProblem(label: string, text: string, s: Pick<ArgSpec, 'type' | 'min'>): string | null {
  const value = Number(text);
  const kind = s.type === 'int' ? 'an integer' : 'a number';
  const bad = text.trim() === '' || !Number.isFinite(value) || (s.type === 'int' && !Number.isInteger(value));
  return bad || (s.min !== undefined && value < s.min)
    ? `${label} must be ${kind}${s.min !== undefined ? ` ≥ ${s.min}` : ''}, got "${text}"`
    : null;
}

/** A number given in a string option that also takes words (e.g. `--rate 300` or `--rate max`); exits 2 unless it is one. */
export function numberArg(label: string, text: string, spec: { type: 'int' | 'number'; min?: number }): number {
  const problem = numberProblem(label, text, spec);
  return problem === null ? Number(text) : exit2(problem);
}

/**
 * Parses `argv` (default: this process's arguments) against the declared options and positionals.
 * Exits 2 with the usage line on an unknown option, a missing or extra positional, or a value of
 * the wrong kind; exits 0 on `--help`.
 */
export function cli<
  const O extends Record<string, ArgSpec> = Record<never, ArgSpec>,
  const P extends readonly PositionalSpec[] = [],
>(spec: { options?: O; positionals?: P }, argv: string[] = process.argv.slice(2)): Args<O, P> {
  const options = (spec.options ?? {}) as Record<string, ArgSpec>;
  const positionals = (spec.positionals ?? []) as readonly PositionalSpec[];
  const usage = usageLine(options, positionals);
  const fail = (message: string): never => exit2(`${message}\n${usage}`);
  if (argv.includes('--help')) {
    process.stdout.write(`${usage}\n`);
    process.exit(0);
  }
  let parsed: ReturnType<typeof parseArgs>;
  try {
    parsed = parseArgs({
      args: argv,
      allowPositionals: positionals.length > 0,
      options: Object.fromEntries(
        Object.entries(options).map(([name, o]) => [
          name,
          {
            type: o.type === 'boolean' ? 'boolean' : 'string',
            ...(o.type === 'list' ? { multiple: true } : {}),
            ...(o.short ? { short: o.short } : {}),
          },
        ]),
      ),
    });
  } catch (error) {
    return fail((error as Error).message);
  }
  if (parsed.positionals.length > positionals.length)
    fail(`unexpected argument ${JSON.stringify(parsed.positionals[positionals.length])}`);

  const convert = (label: string, s: ArgSpec, raw: unknown): unknown => {
    if (raw === undefined) {
      if (s.type === 'boolean') return s.default ?? false;
      if (s.type === 'list') return [...((s.default as readonly string[] | undefined) ?? [])];
      return s.default;
    }
    if (s.type === 'boolean' || s.type === 'list') return raw;
    const text = raw as string;
    if (s.choices && !s.choices.includes(text)) fail(`${label} must be one of ${s.choices.join(', ')}, got "${text}"`);
    if (s.type === 'string') return text;
    const problem = numberProblem(label, text, s);
    return problem === null ? Number(text) : fail(problem);
  };
  const values: Record<string, unknown> = {};
  for (const [name, s] of Object.entries(options)) values[name] = convert(`--${name}`, s, parsed.values[name]);
  positionals.forEach((p, i) => {
    const raw = parsed.positionals[i];
    if (raw === undefined && p.default === undefined && !p.optional && !p.choices) fail(`missing <${p.name}>`);
    values[p.name] = convert(p.name, p, raw);
  });
  return values as Args<O, P>;
}
