// What the memory budget's tests share: a conversation on the fake CLI that reports what it
// remembers, and the daemon's view of its live CLIs.
import OpenAI from 'openai';
import type { TestDaemon } from './daemon.js';

export const MB = 1024 * 1024;

export interface History {
  historyTurns: number;
  pid: number;
  turn: number;
}

export interface Health {
  workers: {
    memory: { budgetMb: number; heldMb: number; atRest: number; activeKeys: number; keyShareMb: number };
    live: { pid: number; state: string; pssMb: number | null }[];
  };
}

/** A conversation whose fake CLI answers each turn with what it remembers (see the fake's report-history). */
export function conversation(t: TestDaemon, token = t.token) {
  const client = new OpenAI({ baseURL: t.baseURL, apiKey: token, maxRetries: 0 });
  const messages: OpenAI.ChatCompletionMessageParam[] = [{ role: 'system', content: '[[fake:report-history]]' }];
  return {
    async say(text: string): Promise<History> {
      messages.push({ role: 'user', content: text });
      const r = await client.chat.completions.create({ model: 'sonnet', messages });
      const reply = r.choices[0]!.message.content!;
      messages.push({ role: 'assistant', content: reply });
      return JSON.parse(reply) as History;
    },
  };
}

export async function health(t: TestDaemon): Promise<Health> {
  return (await (await fetch(`${t.url}/health`, { headers: { authorization: `Bearer ${t.token}` } })).json()) as Health;
}

export function retiredFor(t: TestDaemon, pid: number): unknown {
  return t.logs.find((l) => l.event === 'worker_retired' && l.pid === pid)?.reason;
}

export function metric(text: string, name: string): number {
  const m = new RegExp(`^${name} (\\S+)$`, 'm').exec(text);
  return m ? Number(m[1]) : Number.NaN;
}
