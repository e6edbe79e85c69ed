// One long conversation through olp on the real claude against the stand-in with a context limit:
// how many of its turns are answered when olp's session slots rotate along the way. Used by the
// real-CLI tier (a short run) and by scripts/long-conversation.mjs (the long one).
import OpenAI from 'openai';
import { claudeStandInEnv, startAnthropicStandIn, textChars as textCharsOf } from './anthropic-stand-in.js';
import { startTestDaemon } from './daemon.js';

export interface LongConversationOptions {
  claudeBin: string;
  turns: number;
  /** olp's `--session-turn-cap`. */
  turnCap: number;
  /** Characters of each user message. */
  userChars: number;
  /** The stand-in's context: characters a token and the most input tokens it takes. */
  charsPerToken: number;
  limitTokens: number;
  /** claude's auto-compact window (CLAUDE_CODE_AUTO_COMPACT_WINDOW; 100,000 is its least). */
  compactWindow: number;
  contextOverflow: 'refuse' | 'trim';
  workers?: boolean;
  /** Called after each turn (progress for a long run). */
  onTurn?: (i: number, ok: boolean, detail: string) => void;
}

export interface LongConversationResult {
  answered: number;
  failed: { turn: number; code: string | undefined; message: string }[];
  /** Rotation reasons, in order, of the turns that rotated. */
  rotations: string[];
  /** Requests the stand-in refused as too long. */
  refused: number;
  /** Messages API requests the stand-in got (the CLI's compactions included). */
  requests: number;
  /** Requests that carried a transcript olp rendered (a rotation that re-sent the conversation). */
  resent: number;
  /** The largest prompt the stand-in was sent, in its tokens. */
  maxTokens: number;
  /** olp's log lines (for assertions on the CLI's events). */
  logs: Record<string, unknown>[];
}

const FILLER = 'the quick brown fox jumps over the lazy dog while the band plays on ';

/** A user message of `n` characters that says which turn it is. */
export function userMessage(i: number, n: number): string {
  const head = `turn ${i}: `;
  return (
    head + FILLER.repeat(Math.ceil(n / FILLER.length)).slice(0, Math.max(0, n - head.length - 12)) + `\nend of ${i}`
  );
}

export async function runLongConversation(o: LongConversationOptions): Promise<LongConversationResult> {
  const api = await startAnthropicStandIn();
  api.context = { charsPerToken: o.charsPerToken, limit: o.limitTokens, refused: 0 };
  const t = await startTestDaemon({
    config: {
      claudeBin: o.claudeBin,
      timeout: 180,
      idleTimeout: 120,
      sessionPool: 1,
      sessionTurnCap: o.turnCap,
      contextTokens: { claude: o.limitTokens },
      contextOverflow: o.contextOverflow,
      ...(o.workers ? { workers: true, prestart: false } : {}),
    },
    claudeEnv: { ...claudeStandInEnv(api.url), CLAUDE_CODE_AUTO_COMPACT_WINDOW: String(o.compactWindow) },
  });
  const logs = t.logs;
  try {
    const client = new OpenAI({ baseURL: t.baseURL, apiKey: t.token, maxRetries: 0, timeout: 240_000 });
    const messages: OpenAI.ChatCompletionMessageParam[] = [{ role: 'system', content: 'You are terse.' }];
    const result: LongConversationResult = {
      answered: 0,
      failed: [],
      rotations: [],
      refused: 0,
      requests: 0,
      resent: 0,
      maxTokens: 0,
      logs,
    };
    for (let i = 1; i <= o.turns; i++) {
      messages.push({ role: 'user', content: userMessage(i, o.userChars) });
      try {
        const res = await client.chat.completions.create({ model: 'sonnet', messages });
        const reply = res.choices[0]!.message.content ?? '';
        result.answered++;
        messages.push({ role: 'assistant', content: reply });
        o.onTurn?.(i, true, reply.slice(0, 60));
      } catch (err) {
        const e = err as { code?: string; message?: string };
        result.failed.push({ turn: i, code: e.code, message: String(e.message).slice(0, 300) });
        // A client carries on with its own history.
        messages.push({ role: 'assistant', content: 'no answer' });
        o.onTurn?.(i, false, `${e.code}: ${String(e.message).slice(0, 200)}`);
      }
    }
    result.rotations = logs
      .filter((l) => l.event === 'request' && typeof l.rotation === 'string' && l.rotation !== 'initial')
      .map((l) => String(l.rotation));
    result.refused = api.context.refused;
    const sent = api.requests.filter((r) => r.path === '/v1/messages');
    result.requests = sent.length;
    result.resent = sent.filter((r) => JSON.stringify(r.body.messages ?? []).includes('<conversation>')).length;
    result.maxTokens = Math.max(
      0,
      ...sent.map((r) => Math.ceil(textCharsOf(r.body) / o.charsPerToken)).filter((n) => n <= o.limitTokens * 10),
    );
    return result;
  } finally {
    await t.close();
    await api.close();
  }
}
