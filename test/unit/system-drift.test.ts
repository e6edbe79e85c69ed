import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { driftedFrom } from '../../src/sessions/system-drift.js';

// Claude Code's system prompt is long and mostly the same; a few lines of it change between its
// processes (2.1.197: the model's context size) and turns (the date, the git status).
const prompt = (model: string, status: string) =>
  [
    'You are Claude Code.',
    ...Array.from({ length: 60 }, (_, i) => `Rule ${i}: keep to the house style of the project, always.`),
    `You are powered by the model named ${model}.`,
    'gitStatus:',
    status,
  ].join('\n');

describe("a system prompt's drift", () => {
  const had = prompt('Opus 4.8 (1M context). The exact model ID is claude-opus-4-8[1m].', 'M a.txt');

  it('a few lines changed: the conversation keeps the prompt its CLI has', () => {
    const now = prompt('Opus 4.8. The exact model ID is claude-opus-4-8.', 'M a.txt\n?? b.txt');
    assert.equal(driftedFrom(had, now), had);
  });

  it('a change of meaning (most of it, or a short prompt replaced) is a new prompt', () => {
    assert.equal(driftedFrom(had, 'You are a pirate.'), undefined);
    assert.equal(driftedFrom('You are a chef.', 'You are a pirate.'), undefined);
  });

  it('nothing to drift from: none known, none now, or the same', () => {
    assert.equal(driftedFrom(undefined, had), undefined);
    assert.equal(driftedFrom(null, had), undefined);
    assert.equal(driftedFrom(had, null), undefined);
    assert.equal(driftedFrom(had, had), undefined);
  });
});
