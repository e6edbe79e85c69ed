// What fixes a missing or logged-out codex, worded once for error messages, doctor and start-up.

export const LOGIN_COMMAND = 'codex login';
export const INSTALL_COMMAND = 'npm install -g @openai/codex';
export const LOGIN_FIX = `run \`${LOGIN_COMMAND}\` as the user olp runs as`;
export const INSTALL_FIX = `Install it with \`${INSTALL_COMMAND}\` or point olp at it with --codex-bin.`;
