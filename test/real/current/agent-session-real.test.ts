// The same session on the current claude release (package.json: claude-code-current), as client and backend.
process.env.OLP_TEST_CLAUDE = 'current';
await import('../agent-session-real.test.js');
