import { StringDecoder } from 'node:string_decoder';

/** Splits a byte stream into lines, whatever the chunk boundaries (mid-line, mid-character). */
export function createLineSplitter() {
  const decoder = new StringDecoder('utf8');
  let pending = '';
  return {
    /** The complete, non-blank lines this chunk finishes. */
    push(chunk: Buffer): string[] {
      pending += decoder.write(chunk);
      const lines: string[] = [];
      let start = 0;
      let nl: number;
      while ((nl = pending.indexOf('\n', start)) !== -1) {
        const line = pending.slice(start, nl);
        start = nl + 1;
        if (line.trim() !== '') lines.push(line.endsWith('\r') ? line.slice(0, -1) : line);
      }
      pending = pending.slice(start);
      return lines;
    },
    /** Whatever is left once the stream ends (a last line without a newline). */
    end(): string[] {
      const rest = pending + decoder.end();
      pending = '';
      return rest.trim() === '' ? [] : [rest];
    },
  };
}
