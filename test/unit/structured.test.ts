import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { toStrictSchema, withoutAddedNulls } from '../../src/backends/codex/schema.js';
import { createFenceStripper } from '../../src/transcript/index.js';

describe('the strict schema codex sends', () => {
  it('requires every property, forbids others, and makes the optional ones nullable, all the way down', () => {
    const strict = toStrictSchema({
      type: 'object',
      properties: {
        name: { type: 'string' },
        age: { type: 'integer' },
        tags: { type: 'array', items: { type: 'object', properties: { label: { type: 'string' } } } },
        kind: { type: 'string', enum: ['a', 'b'] },
        either: { oneOf: [{ type: 'string' }, { type: 'number' }] },
      },
      required: ['name', 'tags'],
    });
    assert.deepEqual(strict, {
      type: 'object',
      properties: {
        name: { type: 'string' },
        age: { type: ['integer', 'null'] },
        tags: {
          type: 'array',
          items: {
            type: 'object',
            properties: { label: { type: ['string', 'null'] } },
            required: ['label'],
            additionalProperties: false,
          },
        },
        kind: { type: ['string', 'null'], enum: ['a', 'b', null] },
        either: { anyOf: [{ type: 'string' }, { type: 'number' }, { type: 'null' }] },
      },
      required: ['name', 'age', 'tags', 'kind', 'either'],
      additionalProperties: false,
    });
  });

  it('leaves a schema already strict as it was', () => {
    const s = {
      type: 'object',
      properties: { a: { type: 'string' }, b: { $ref: '#/$defs/b' } },
      required: ['a', 'b'],
      additionalProperties: false,
      $defs: {
        b: { type: 'object', properties: { c: { type: 'number' } }, required: ['c'], additionalProperties: false },
      },
    };
    assert.deepEqual(toStrictSchema(s), s);
  });
});

describe("a strict-form reply made to fit the client's schema", () => {
  it('leaves out nulls of properties that were optional and not nullable, all the way down; keeps the rest', () => {
    const schema = {
      type: 'object',
      properties: {
        a: { type: 'string' },
        b: { type: ['string', 'null'] },
        c: { type: 'string' },
        list: { type: 'array', items: { type: 'object', properties: { x: { type: 'number' } } } },
      },
      required: ['c'],
    };
    assert.deepEqual(withoutAddedNulls({ a: null, b: null, c: null, list: [{ x: null }, { x: 1 }] }, schema), {
      b: null,
      c: null,
      list: [{}, { x: 1 }],
    });
  });
});

describe('code fences off JSON replies', () => {
  const cases: [string, string][] = [
    ['```json\n{"a": 1}\n```', '{"a": 1}'],
    ['```\n[1, 2]\n```\n', '[1, 2]'],
    ['  ```JSON\r\n{"a": "```"}\r\n```  ', '{"a": "```"}'],
    ['{"a": 1}', '{"a": 1}'],
    ['`x` is not a fence', '`x` is not a fence'],
    ['```json\n{"open": true}', '{"open": true}'],
    ['', ''],
  ];
  for (const [input, expected] of cases) {
    it(`${JSON.stringify(input)} in chunks of every size`, () => {
      for (let size = 1; size <= Math.max(1, input.length); size++) {
        const f = createFenceStripper();
        let out = '';
        for (let i = 0; i < input.length; i += size) out += f.push(input.slice(i, i + size));
        out += f.end();
        assert.equal(out, expected, `chunks of ${size}`);
      }
    });
  }
});
