// Holding a fake claude run open for as long as a test needs: the `held` scenario (`[[fake:held]]`)
// answers only once the file `release` appears in the fake's record dir. Unlike `slow`, whose run
// ends after a fixed time a busy machine may overrun, the test decides when it ends.
import { rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

/** Lets every held run of the daemon whose fake CLIs record to `recordDir` answer. */
export function releaseHeld(recordDir: string): void {
  writeFileSync(join(recordDir, 'release'), '');
}

/** Holds the next `held` runs again (after a release). */
export function holdAgain(recordDir: string): void {
  rmSync(join(recordDir, 'release'), { force: true });
}
