// The same tests on the current claude release (package.json: claude-code-current).
process.env.OLP_TEST_CLAUDE = 'current';
await import('../claude-login-refresh-real.test.js');
