// What a workspace is and how callers ask for one: the folder's contract, without its I/O.

/** A file of the operator's made visible inside a workspace home (credentials, mostly). */
export interface Link {
  /**
   * Absolute path of the real file; with `persistent`, a directory relative to the workspace's persistent
   * dir (created if missing).
   */
  from: string;
  persistent?: boolean;
  /** Path relative to the workspace home. */
  to: string;
}

/** A file written into the workspace before the spawn (e.g. a system prompt read via a `-file` flag). */
export interface WorkspaceFile {
  /** Path relative to the workspace root. */
  name: string;
  content: string | Buffer;
}

export interface Workspace {
  /** Root of this workspace: `<run dir>/<keyId>/<requestId>` (see `runDirFor`). */
  readonly dir: string;
  /** The child's HOME: fresh for every request. */
  readonly home: string;
  /** The child's working directory: fresh per request, or the slot's stable one. */
  readonly cwd: string;
  /**
   * A directory that outlives the request when the workspace belongs to a slot (a CLI's own
   * session store goes here); inside the request workspace otherwise (created on first use).
   */
  readonly persistent: string;
  /** Absolute path of a file inside the workspace root. */
  path(name: string): string;
  /** Writes a private (0600) file inside the workspace root; never overwrites. */
  writeFile(name: string, content: string | Buffer): void;
  /** Removes the request's workspace (never the slot's stable directories); safe to call twice. */
  remove(): void;
  /** The same, off the event loop (the recursive delete runs on libuv's thread pool). */
  removeLater(): Promise<void>;
}

export interface CreateOptions {
  keyId: string;
  requestId: string;
  links?: readonly Link[];
  /** Directories to create inside the home (relative paths). */
  dirs?: readonly string[];
  /**
   * Ask for a stable place instead of a throwaway one: cwd and `persistent` live under
   * `<state>/slots/<keyId>/<slot>/` and survive the request (HOME stays fresh).
   */
  slot?: string;
  /** With `slot`: start the slot over (its old CLI session files are deleted). */
  resetSlot?: SlotReset;
}

/** How a slot starts over. */
export interface SlotReset {
  /**
   * The id of the session the slot held. The CLIs name a session's files after it, so only
   * paths carrying it are deleted, in the background, and the slot's directories stay (no
   * directory is made again on the request's path). Without it the whole persistent dir is set
   * aside (one rename) and made again.
   */
  staleSession?: string | undefined;
  /**
   * What still writes the old session (its CLI, exiting): its files are deleted once this
   * settles. Only for a reset that `prunes` says is a background deletion; a whole-store reset
   * renames the directory at once, so its writers must be gone before.
   */
  after?: Promise<unknown> | undefined;
}
