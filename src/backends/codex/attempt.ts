import type { BackendEvent, ToolStep } from '../types.js';
import { createToolCalls } from './tool-calls.js';

/**
 * What a codex turn forwarded since the model was last asked (the turn began, went on after the
 * client's tools, or a call started), and the turn's calls of the client's functions: when codex
 * asks the model again, that attempt is said `abandoned`. Either codex parser keeps one per turn.
 */
export class Attempt {
  /** Agent messages forwarded in the turn (a blank line goes between two). */
  messages = 0;
  private text = '';
  private events = 0;
  /** `messages` when the model was last asked. */
  private messagesBefore = 0;
  private readonly tools = createToolCalls();

  get toolStep(): ToolStep | undefined {
    return this.tools.step;
  }

  /** Text forwarded: this attempt's, until the model is asked again. */
  said(events: BackendEvent[]): BackendEvent[] {
    for (const ev of events) {
      if (ev.type !== 'text') continue;
      this.text += ev.text;
      this.events++;
    }
    return events;
  }

  /** A call codex started. It stays (see createToolCalls): what came before it cannot be taken back either. */
  call(itemId: string, name: string, args: unknown): BackendEvent[] {
    const events = this.tools.start(itemId, name, args);
    if (events.length > 0) this.restart();
    return events;
  }

  /** codex asks the model again: what the broken attempt produced is void. */
  retry(message: string): BackendEvent[] {
    const { text, events } = this;
    this.messages = this.messagesBefore;
    this.restart();
    return [...(events > 0 ? [{ type: 'abandoned' as const, text, events }] : []), { type: 'retry', message }];
  }

  /** The turn goes on with the client's results: the next calls make a new step. */
  continueAfterTools(): void {
    this.tools.next();
    this.restart();
  }

  private restart(): void {
    this.text = '';
    this.events = 0;
    this.messagesBefore = this.messages;
  }
}
