import { homedir } from 'node:os';
import { join } from 'node:path';
import { z } from 'zod';
import { envName, type Field } from './field.js';

/** Where olp listens and keeps its state, the CLIs it runs and the models it offers. */
export const PLACE_FIELDS = {
  host: {
    kind: 'string',
    schema: z.string().min(1).default('127.0.0.1'),
    flag: 'host',
    env: 'OLP_HOST',
    description: 'Address to bind. Anything but loopback exposes olp to your network.',
  },
  port: {
    kind: 'int',
    schema: z.number().int().min(0).max(65535).default(8787),
    flag: 'port',
    env: 'OLP_PORT',
    description: 'TCP port (0 picks a free one).',
  },
  stateDir: {
    kind: 'string',
    schema: z.string().min(1).default(join(homedir(), '.olp')),
    flag: 'state-dir',
    env: 'OLP_STATE_DIR',
    description: 'State directory (database, workspaces, config.json), created 0700.',
  },
  instanceTag: {
    kind: 'string',
    schema: z
      .string()
      .regex(/^[a-z0-9]{1,16}$/, 'expected 1-16 lower-case letters or digits')
      .optional(),
    flag: 'instance-tag',
    env: 'OLP_INSTANCE_TAG',
    description:
      "This instance's tag when several olp instances share a front door (`olp front nginx`): keys made or " +
      'rotated here carry it (olpk_<tag>_…), so the door routes each key to its instance.',
  },
  peers: {
    kind: 'list',
    schema: z
      .array(
        z
          .string()
          .regex(
            /^[a-z0-9]{1,16}=https?:\/\/[^\s/@]+(\/\S*)?$/,
            'expected TAG=URL (b2=http://10.0.0.3:8787), no user or password',
          ),
      )
      .default([]),
    flag: 'peer',
    env: 'OLP_PEERS',
    description:
      'The other instances behind the same front door, as TAG=URL (repeat the flag): a key of one of them sent ' +
      'here is told where it belongs (421 wrong_instance, which names the URL to whoever sends such a key).',
  },
  runDir: {
    kind: 'string',
    schema: z.string().min(1).optional(),
    flag: 'run-dir',
    env: 'OLP_RUN_DIR',
    description:
      "Where each request's throwaway home and working directory are made, created 0700 (default: a private " +
      'folder in /dev/shm when it is tmpfs, else <state-dir>/run).',
  },
  claudeBin: {
    kind: 'string',
    schema: z.string().min(1).default('claude'),
    flag: 'claude-bin',
    env: 'OLP_CLAUDE_BIN',
    description: 'The claude executable (a path, or a name looked up on PATH).',
  },
  claudeCredentials: {
    kind: 'string',
    schema: z.string().min(1).optional(),
    flag: 'claude-credentials',
    env: 'OLP_CLAUDE_CREDENTIALS',
    description:
      "The claude login file linked into each run's home (default: $CLAUDE_CONFIG_DIR or ~/.claude, " +
      '/.credentials.json).',
  },
  claudePassEnv: {
    kind: 'list',
    schema: z.array(envName).default([]),
    flag: 'claude-pass-env',
    env: 'OLP_CLAUDE_PASS_ENV',
    description:
      "Names of the daemon's environment variables handed to claude (e.g. ANTHROPIC_API_KEY). Off by default.",
  },
  claudeEnv: {
    kind: 'record',
    schema: z.record(envName, z.string()).default({}),
    env: 'OLP_CLAUDE_ENV',
    description: 'Extra environment for claude, as a JSON object (config file or env). Off by default.',
  },
  codexBin: {
    kind: 'string',
    schema: z.string().min(1).default('codex'),
    flag: 'codex-bin',
    env: 'OLP_CODEX_BIN',
    description: 'The codex executable (a path, or a name looked up on PATH).',
  },
  codexAuth: {
    kind: 'string',
    schema: z.string().min(1).optional(),
    flag: 'codex-auth',
    env: 'OLP_CODEX_AUTH',
    description:
      "The codex login file linked into each run's CODEX_HOME (default: $CODEX_HOME or ~/.codex, /auth.json).",
  },
  codexPassEnv: {
    kind: 'list',
    schema: z.array(envName).default([]),
    flag: 'codex-pass-env',
    env: 'OLP_CODEX_PASS_ENV',
    description: "Names of the daemon's environment variables handed to codex (e.g. CODEX_API_KEY). Off by default.",
  },
  codexEnv: {
    kind: 'record',
    schema: z.record(envName, z.string()).default({}),
    env: 'OLP_CODEX_ENV',
    description: 'Extra environment for codex, as a JSON object (config file or env). Off by default.',
  },
  codexConfig: {
    kind: 'list',
    commas: false,
    schema: z.array(z.string().regex(/^[A-Za-z0-9_.-]+=/, 'expected key=value')).default([]),
    flag: 'codex-config',
    env: 'OLP_CODEX_CONFIG',
    description:
      'codex `-c key=value` overrides for every run (repeat the flag; in the environment a JSON array), e.g. a ' +
      'model provider.',
  },
  statusTimeout: {
    kind: 'int',
    schema: z.number().int().min(1).default(15),
    flag: 'status-timeout',
    env: 'OLP_STATUS_TIMEOUT',
    description:
      "Seconds the CLIs' status commands (--version, claude auth status, codex login status) may take; one that " +
      'takes longer leaves the login not checked, never failed.',
  },
  models: {
    kind: 'record',
    schema: z
      .record(
        z.string().min(1),
        z.union([z.object({ backend: z.enum(['claude', 'codex']), model: z.string().min(1) }), z.null()]),
      )
      .default({}),
    env: 'OLP_MODELS',
    description:
      'Model table changes as JSON: {"id": {"backend": "claude"|"codex", "model": "cli name"}} adds or renames, ' +
      '{"id": null} hides.',
  },
  fallbacks: {
    kind: 'record',
    schema: z.record(z.string().min(1), z.array(z.string().min(1)).min(1)).default({}),
    env: 'OLP_FALLBACKS',
    description:
      'Fallback chains as JSON: {"sonnet": ["codex"]} tries codex when sonnet is unavailable or rate-limited ' +
      'before any output.',
  },
  anthropicModels: {
    kind: 'record',
    schema: z.record(z.string().min(1), z.string().min(1)).default({}),
    env: 'OLP_ANTHROPIC_MODELS',
    description:
      'Models that serve /v1/messages requests for Anthropic model ids, as JSON of globs: {"claude-*": "codex"} ' +
      'serves Claude Code on codex. First match wins; other endpoints are not affected.',
  },
} satisfies Record<string, Field>;
