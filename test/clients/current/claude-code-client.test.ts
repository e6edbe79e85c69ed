// The same tests with the current Claude Code release as the client (package.json: claude-code-current).
process.env.OLP_TEST_CLAUDE_CLIENT = 'current';
await import('../claude-code-client.test.js');
