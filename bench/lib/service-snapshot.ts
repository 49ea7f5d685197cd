/**
 * The service as a bench measures it: a snapshot of this checkout's working tree or of a commit,
 * copied into a scratch folder with this checkout's node_modules linked, so that edits made to
 * the checkout during a run do not reach the processes it runs, and a change can be measured
 * against the commit before it in the same conditions.
 */
import { execFileSync } from 'node:child_process';
import { createHash, randomBytes } from 'node:crypto';
import { cpSync, existsSync, mkdirSync, readdirSync, readFileSync, statSync, symlinkSync } from 'node:fs';
import path from 'node:path';

export const REPO_ROOT = path.resolve(path.dirname(new URL(import.meta.url).pathname), '../..');

/** The files a service process needs. */
const SERVICE_FILES = ['bin', 'src', 'index-templates', 'package.json', 'tsconfig.json', 'tsconfig.build.json'];

/** What {@link snapshotService} copied, and where. */
export interface ServiceSnapshot {
  /** The folder the service runs from; the caller removes it. */
  dir: string;
  /** `commit abc1234 (git archive)` or `working tree at abc1234[ + uncommitted changes]`. */
  source: string;
  commit: string | null;
  /** `git status --porcelain` lines of the service's files (working tree only). */
  modified: string[];
  /** Of the copied files' paths and contents: two runs with the same hash ran the same service. */
  hash: string;
}

function git(...args: string[]): string | null {
  try {
    return execFileSync('git', ['--no-optional-locks', ...args], {
      cwd: REPO_ROOT,
      encoding: 'utf8',
      stdio: ['ignore', 'pipe', 'ignore'],
    }).trim();
  } catch {
    return null;
  }
}

/**
 * Copies the service into `.scratch/`: commit `rev` (`git archive`, read-only for the repository),
 * or without `rev` this working tree, uncommitted edits included.
 */
export function snapshotService(rev?: string): ServiceSnapshot {
  const commit = git('rev-parse', '--verify', `${rev ?? 'HEAD'}^{commit}`);
  if (rev && !commit) throw new Error(`${rev}: no such commit`);
  const dir = path.join(
    REPO_ROOT,
    '.scratch',
    `service-${commit?.slice(0, 10) ?? 'tree'}-${randomBytes(3).toString('hex')}`,
  );
  mkdirSync(dir, { recursive: true });
  let modified: string[] = [];
  if (rev) {
    // A bench told to measure a commit (day.ts's default is HEAD) does not see edits made since.
    const uncommitted = (git('status', '--porcelain', '--', ...SERVICE_FILES) ?? '').split('\n').filter(Boolean);
    if (uncommitted.length > 0)
      console.error(
        `measuring ${rev} (${commit?.slice(0, 7)}): ${uncommitted.length} uncommitted change(s) to the service are not measured (${uncommitted
          .slice(0, 3)
          .map((l) => l.replace(/^\s*\S+\s+/, ''))
          .join(', ')}${uncommitted.length > 3 ? ', …' : ''})`,
      );
    execFileSync(
      'sh',
      ['-c', `git --no-optional-locks archive --format=tar ${commit} ${SERVICE_FILES.join(' ')} | tar -x -C '${dir}'`],
      { cwd: REPO_ROOT, stdio: ['ignore', 'ignore', 'inherit'] },
    );
  } else {
    modified = (git('status', '--porcelain', '--', ...SERVICE_FILES) ?? '').split('\n').filter(Boolean);
    for (const entry of SERVICE_FILES) cpSync(path.join(REPO_ROOT, entry), path.join(dir, entry), { recursive: true });
  }
  symlinkSync(path.join(REPO_ROOT, 'node_modules'), path.join(dir, 'node_modules'));
  const hash = createHash('sha256');
  const walk = (file: string) => {
    if (statSync(file).isDirectory()) for (const entry of readdirSync(file).sort()) walk(path.join(file, entry));
    else hash.update(path.relative(dir, file)).update(readFileSync(file));
  };
  for (const entry of SERVICE_FILES) if (existsSync(path.join(dir, entry))) walk(path.join(dir, entry));
  const short = commit?.slice(0, 7) ?? null;
  return {
    dir,
    source: rev
      ? `commit ${short} (git archive)`
      : `working tree at ${short ?? '?'}${modified.length ? ' + uncommitted changes' : ''}`,
    commit: short,
    modified,
    hash: hash.digest('hex').slice(0, 16),
  };
}

/** Compiles the service at `root` as the Docker image does (`tsconfig.build.json` into `root/dist`). */
export function compileService(root: string): void {
  execFileSync(
    process.execPath,
    [path.join(REPO_ROOT, 'node_modules/typescript/bin/tsc'), '-p', 'tsconfig.build.json'],
    { cwd: root, stdio: 'inherit' },
  );
}
