// What olp repeats of a CLI's login commands: a verdict on a credential, a failure, and the CLI's own
// words made fit to print.

/**
 * What the CLI said of a credential, in a few words fit to print: accepted (`ok` true), refused
 * (false), or not known because its status command did not answer in time (null: not a verdict).
 */
export interface CliVerdict {
  ok: boolean | null;
  said: string;
}

/** A failure of a CLI's own login command, with its words (secrets masked). */
export class LoginFailed extends Error {}

// Anything that looks like a credential, masked in what olp repeats of a CLI's words.
const SECRETISH = /\b(sk-[A-Za-z0-9_*-]{6,}|at-[A-Za-z0-9_-]{6,}|eyJ[A-Za-z0-9_-]{8,}(?:\.[A-Za-z0-9_-]*){0,2})/g;

/** A CLI's output as one short line for olp to repeat: credentials masked, whitespace collapsed. */
export function toSaid(text: string, secrets: readonly string[] = []): string {
  let t = text;
  for (const s of secrets) if (s) t = t.split(s).join('***');
  t = t.replace(SECRETISH, '***').replace(/\s+/g, ' ').trim();
  return t.length > 300 ? `${t.slice(0, 300)}…` : t;
}

/**
 * A status command that ran out of time, said as what it is: no answer yet, not a verdict (on a busy
 * machine a CLI can take longer than usual to start). One wording for doctor, the start and `olp logins`.
 */
export function toStatusTimeoutText(backend: string, command: string, seconds: number): string {
  return (
    `${backend}'s status command (${command}) did not answer within ${Number(seconds.toFixed(1))} s; ` +
    'its login was not checked'
  );
}
