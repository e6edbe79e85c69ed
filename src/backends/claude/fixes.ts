// What fixes a missing or logged-out claude, worded once for error messages, doctor and start-up.

export const LOGIN_COMMAND = 'claude auth login';
export const INSTALL_COMMAND = 'npm install -g @anthropic-ai/claude-code';
export const LOGIN_FIX = `run \`${LOGIN_COMMAND}\` (or \`claude\` and then /login) as the user olp runs as`;
export const INSTALL_FIX = `Install it with \`${INSTALL_COMMAND}\` or point olp at it with --claude-bin.`;
