/** A command line olp cannot use: exit 2, the message and where its help is. */
export class UsageError extends Error {}
