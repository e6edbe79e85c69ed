// What olp reads off `codex login --device-auth` (0.171, captured with the real binary against a
// loopback issuer): the link and code inside its ANSI colours, whole lines only, and what its last
// error line means.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { parseDevicePrompt, toDeviceError } from '../../src/logins/index.js';

const CAPTURED =
  "\nWelcome to Codex [v\u001b[90m0.171.0\u001b[0m]\n\u001b[90mOpenAI's command-line coding agent\u001b[0m\n\n" +
  'Follow these steps to sign in with ChatGPT using device code authorization:\n\n' +
  '1. Open this link in your browser and sign in to your account\n   \u001b[94mhttp://127.0.0.1:37047/codex/device\u001b[0m\n\n' +
  '2. Enter this one-time code \u001b[90m(expires in 15 minutes)\u001b[0m\n   \u001b[94mABCD-1234\u001b[0m\n\n' +
  '\u001b[90mContinue only if you started this login in Codex. If a website or another person gave you this code, cancel.\u001b[0m\n\n';

describe('the device prompt', () => {
  it('reads the link, the code and its minutes through the colours', () => {
    assert.deepEqual(parseDevicePrompt(CAPTURED), {
      url: 'http://127.0.0.1:37047/codex/device',
      code: 'ABCD-1234',
      minutes: 15,
    });
  });
  it('waits for the code line to be whole, at every cut', () => {
    const end = CAPTURED.indexOf('ABCD-1234') + 'ABCD-1234\u001b[0m\n'.length;
    for (let i = 0; i < end; i++) assert.equal(parseDevicePrompt(CAPTURED.slice(0, i)), undefined, `cut at ${i}`);
    assert.equal(parseDevicePrompt(CAPTURED.slice(0, end))?.code, 'ABCD-1234');
  });
  it("says what codex's last error line means", () => {
    const warn = 'WARNING: proceeding, even though we could not create PATH aliases\n';
    assert.equal(
      toDeviceError(`${warn}Error logging in: device auth failed with status 401 Unauthorized\n`).code,
      'device_auth_refused',
    );
    assert.equal(
      toDeviceError('Error logging in: device auth timed out after 15 minutes\n').code,
      'device_auth_expired',
    );
    const failed = toDeviceError(
      'Error logging in: device code request failed with status 500 Internal Server Error\n',
    );
    assert.deepEqual(failed, {
      code: 'device_auth_failed',
      message: 'Error logging in: device code request failed with status 500 Internal Server Error',
    });
  });
});
