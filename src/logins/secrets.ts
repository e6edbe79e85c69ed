import { readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { ensurePrivateDir, type LoginCli } from '../store/index.js';

// A login's secrets: files under <state>/logins/<name>/, 0600 in 0700 directories.

/** Where a login's secrets live. */
export function loginPaths(stateDir: string, name: string) {
  const dir = join(stateDir, 'logins', name);
  return {
    dir,
    claudeToken: join(dir, 'claude-token'),
    claudeApiKey: join(dir, 'claude-api-key'),
    codexHome: join(dir, 'codex'),
    codexAuth: join(dir, 'codex', 'auth.json'),
  };
}

/**
 * A claude setup token as pasted: one line, `sk-ant-oat…` (what `claude setup-token` prints).
 * Throws naming what is wrong (the token itself is never echoed).
 */
export function checkClaudeToken(raw: string): string {
  const token = raw.trim();
  if (token === '') throw new Error('no token was given (paste the one `claude setup-token` printed)');
  if (/\s/.test(token)) throw new Error('the token has spaces or line breaks inside: paste it as one line');
  if (token.startsWith('sk-ant-api'))
    throw new Error('that is an Anthropic API key, not a subscription token: make one with `claude setup-token`');
  if (!token.startsWith('sk-ant-oat'))
    throw new Error("that does not look like a claude setup token (they start 'sk-ant-oat')");
  return token;
}

/** An Anthropic API key as pasted: one line, `sk-ant-api…`. Throws naming what is wrong (never echoing it). */
export function checkClaudeApiKey(raw: string): string {
  const key = raw.trim();
  if (key === '') throw new Error('no API key was given');
  if (/\s/.test(key)) throw new Error('the API key has spaces or line breaks inside: paste it as one line');
  if (!key.startsWith('sk-ant-api'))
    throw new Error("that does not look like an Anthropic API key (they start 'sk-ant-api')");
  return key;
}

/** Writes a private file whole (aside, then renamed over), in a 0700 directory. */
export function writeSecret(file: string, content: string): void {
  ensurePrivateDir(join(file, '..'));
  const aside = `${file}.${process.pid}.tmp`;
  writeFileSync(aside, content, { mode: 0o600 });
  renameSync(aside, file);
}

/** Stores a login's claude setup token (in place of an API key it had: one kind at a time). */
export function saveClaudeToken(stateDir: string, name: string, token: string): void {
  ensurePrivateDir(join(stateDir, 'logins'));
  const p = loginPaths(stateDir, name);
  writeSecret(p.claudeToken, `${checkClaudeToken(token)}\n`);
  rmSync(p.claudeApiKey, { force: true });
}

/** Stores a login's Anthropic API key, which runs get as ANTHROPIC_API_KEY (in place of a setup token). */
export function saveClaudeApiKey(stateDir: string, name: string, key: string): void {
  ensurePrivateDir(join(stateDir, 'logins'));
  const p = loginPaths(stateDir, name);
  writeSecret(p.claudeApiKey, `${checkClaudeApiKey(key)}\n`);
  rmSync(p.claudeToken, { force: true });
}

/** Deletes a login's secrets for one CLI, or all of them. */
export function removeLoginFiles(stateDir: string, name: string, cli?: LoginCli): void {
  const p = loginPaths(stateDir, name);
  if (cli === 'claude') {
    rmSync(p.claudeToken, { force: true });
    rmSync(p.claudeApiKey, { force: true });
  } else if (cli === 'codex') rmSync(p.codexHome, { recursive: true, force: true });
  else rmSync(p.dir, { recursive: true, force: true });
}

/** A secret file's one line; undefined when it is missing or empty. */
export function readToken(file: string): string | undefined {
  try {
    return readFileSync(file, 'utf8').trim() || undefined;
  } catch {
    return undefined;
  }
}
