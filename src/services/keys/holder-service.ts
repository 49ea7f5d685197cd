import { randomBytes } from 'node:crypto';
import { z } from 'zod';
import { DomainError, ValidationFailedError } from '../../internal/errors.ts';
import { holderEmailSchema } from './holder-email.ts';
import type { HolderStore } from './holder-store.ts';
import { dummyPasswordHash, hashPassword, verifyPassword } from './password-hash.ts';
import type { SignInAttempts } from './sign-in-attempts.ts';

/** Who may sign up: anyone, holders of an invitation code, or nobody (CLI-created holders only). */
export type SignUpMode = 'open' | 'invite' | 'closed';

/**
 * Sign-in refused. One message whatever the cause (unknown email, wrong password, a holder that
 * never chose a password), so the answer does not tell whether an email has an account.
 */
export class SignInRejectedError extends DomainError {
  readonly problem = 'authentication-required';
  constructor() {
    super('Incorrect email or password.');
  }
}

/** Too many failed sign-ins for this email or from this address. */
export class SignInThrottledError extends DomainError {
  readonly problem = 'rate-limit-exceeded';
  constructor(readonly retryAfterSeconds: number) {
    super(`Too many failed sign-in attempts. Try again in ${Math.ceil(retryAfterSeconds / 60)} minute(s).`);
  }
}

/**
 * Sign-up refused. One message for "taken" and "bad invitation": the sign-up form is the one place
 * an email's existence could leak, and without email verification this keeps it from being a
 * clean oracle (docs/api-decisions.md, "Account holders and the dashboard").
 */
export class SignUpRejectedError extends DomainError {
  readonly problem = 'validation-failed';
  constructor(mode: SignUpMode) {
    super(
      mode === 'closed'
        ? 'Sign-up is closed on this service. Ask its operator for an account.'
        : 'No account could be created with these details. Check the invitation code, or sign in if you already have an account.',
    );
  }
}

/** A signed-in holder, as a session knows it. */
export interface Holder {
  email: string;
}

/** Account holders: sign-up, sign-in, CLI creation and invitations. */
export interface HolderService {
  readonly signUpMode: SignUpMode;
  signUp(input: { email: string; password: string; invitation?: string | undefined }): Promise<Holder>;
  /** `address`: the client's IP, for the per-address attempt limit. */
  signIn(input: { email: string; password: string; address: string }): Promise<Holder>;
  /** Creates the holder of `email` without a password when absent (`keys create --owner`). */
  ensure(email: string): Promise<{ email: string; created: boolean }>;
  /** A new invitation code, valid `days`, bound to `email` when given. */
  invite(options: {
    email?: string | undefined;
    days: number;
  }): Promise<{ code: string; email: string | null; expires_at: string }>;
}

/** Dependencies of {@link createHolderService}. */
export interface HolderServiceDeps {
  store: HolderStore;
  attempts: SignInAttempts;
  signUpMode: SignUpMode;
  now?: () => Date;
}

// NIST SP 800-63B: a length floor, no composition rules, long passphrases allowed.
const PASSWORD_MIN = 10;
const passwordSchema = z
  .string()
  .min(PASSWORD_MIN, `the password must be at least ${PASSWORD_MIN} characters`)
  .max(256, 'the password must be at most 256 characters');

function parse<T>(schema: z.ZodType<T>, value: unknown, field: string): T {
  const parsed = schema.safeParse(value);
  if (!parsed.success) {
    const message = parsed.error.issues[0]?.message ?? 'is invalid';
    throw new ValidationFailedError(message.startsWith('must') ? `${field} ${message}` : message);
  }
  return parsed.data;
}

/** Creates the {@link HolderService}. */
export function createHolderService({
  store,
  attempts,
  signUpMode,
  now = () => new Date(),
}: HolderServiceDeps): HolderService {
  return {
    signUpMode,

    async signUp(input) {
      if (signUpMode === 'closed') throw new SignUpRejectedError(signUpMode);
      const email = parse(holderEmailSchema, input.email, 'email');
      const password = parse(passwordSchema, input.password, 'password');
      const invitation = input.invitation?.trim() || null;
      const outcome = await store.signUp({
        email,
        passwordHash: await hashPassword(password),
        createdAt: now().toISOString(),
        invitation,
        invitationRequired: signUpMode === 'invite',
      });
      if (!outcome.ok) throw new SignUpRejectedError(signUpMode);
      return { email };
    },

    async signIn(input) {
      // Not a validation error: a malformed email gets the same answer as an unknown one.
      const parsed = holderEmailSchema.safeParse(input.email);
      const email = parsed.success ? parsed.data : String(input.email).trim().toLowerCase().slice(0, 254);
      const blocked = await attempts.blockedFor(email, input.address);
      if (blocked > 0) throw new SignInThrottledError(blocked);
      const holder = parsed.success ? await store.get(email) : null;
      // Verify against a dummy hash when there is nothing to verify: same cost, same answer.
      const ok = await verifyPassword(
        String(input.password).slice(0, 256),
        holder?.password_hash ?? (await dummyPasswordHash()),
      );
      if (!ok || !holder?.password_hash) {
        await attempts.failed(email, input.address);
        throw new SignInRejectedError();
      }
      await attempts.succeeded(email);
      return { email };
    },

    async ensure(rawEmail) {
      const email = parse(holderEmailSchema, rawEmail, 'email');
      return { email, created: await store.ensure(email, now().toISOString()) };
    },

    async invite({ email: rawEmail, days }) {
      const email = rawEmail === undefined ? null : parse(holderEmailSchema, rawEmail, 'email');
      if (!Number.isInteger(days) || days < 1 || days > 90)
        throw new ValidationFailedError('days must be a whole number from 1 to 90');
      const code = `inv_${randomBytes(18).toString('base64url')}`;
      const createdAt = now();
      await store.invite(code, { email, createdAt: createdAt.toISOString(), ttlSeconds: days * 86_400 });
      return { code, email, expires_at: new Date(createdAt.getTime() + days * 86_400_000).toISOString() };
    },
  };
}
