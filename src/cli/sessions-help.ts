import { COMMON_OPTIONS } from './help.js';

// `olp sessions`' help and flags.

export const SESSIONS_HELP = `Usage: olp sessions COMMAND [options]

olp keeps a few CLI sessions per key and resumes them instead of resending the whole history.

Commands:
  olp sessions list [--key NAME]            session slots: age, turns, last rotation reason, cache-hit share
  olp sessions rotate --key NAME | --all    forget the CLI sessions: the next request of each slot starts fresh

Options:
  --key NAME           only this key's slots
  --all                every key's slots (rotate)
${COMMON_OPTIONS}
`;

export const SESSION_FLAGS = { key: { type: 'string' }, all: { type: 'boolean' } } as const;
