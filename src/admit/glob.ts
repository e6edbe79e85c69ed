/** Whether a model id matches any of a key's patterns (exact ids, or globs with `*` and `?`). */
export function modelAllowed(patterns: readonly string[], id: string): boolean {
  return patterns.some((p) => {
    if (!p.includes('*') && !p.includes('?')) return p === id;
    const re = new RegExp(
      `^${p
        .replace(/[.+^${}()|[\]\\]/g, '\\$&')
        .replaceAll('*', '.*')
        .replaceAll('?', '.')}$`,
    );
    return re.test(id);
  });
}
