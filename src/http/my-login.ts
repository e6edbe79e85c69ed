import type { Express, NextFunction, Request, RequestHandler, Response } from 'express';
import type { Principal } from '../auth/index.js';
import { loginPartNotFound, loginShared, memberLoginsOff } from '../errors/index.js';
import {
  type ConnectDeps,
  type MemberCaller,
  runConnectClaude,
  runConnectCodex,
  runRemoveCredential,
  runStartDevice,
} from '../logins/index.js';
import type { Plans } from '../plan/index.js';
import type { LoginCli } from '../store/index.js';
import { ctx } from './context.js';
import { logAction } from './keys-admin.js';
import { parseClaudeLogin, parseCodexLogin, parseDeviceStart } from './my-login-body.js';
import { type MemberLoginsDeps, toMyLoginView } from './my-login-view.js';

export type { MemberLoginsDeps } from './my-login-view.js';

// /olp/me/login: a key connects its own CLI login from the usage page (any key; a member only its
// own, unshared login, and not under --member-logins off). Keys travel as bearer tokens, never
// cookies, so another site's page cannot make a browser send these.

/** The calling key as connecting sees it, read afresh (its login may have just changed). */
function callerOf(m: MemberLoginsDeps, res: Response): MemberCaller {
  const p: Principal = ctx(res).principal!;
  const key = m.connect.store.keys.get(p.name);
  return { keyId: p.keyId, name: p.name, role: p.role, login: key ? key.login : p.login };
}

function connectDeps(m: MemberLoginsDeps, res: Response): ConnectDeps {
  return { ...m.connect, onAction: (a) => logAction(res, a) };
}

/** PUT, POST and DELETE: refused before the body is read when the caller may not change its login. */
function guard(m: MemberLoginsDeps) {
  return (_req: Request, res: Response, next: NextFunction): void => {
    const caller = callerOf(m, res);
    if (caller.role !== 'owner') {
      if (m.policy === 'off') throw memberLoginsOff();
      const keys = caller.login === null ? [] : m.connect.store.logins.keysOf(caller.login);
      if (caller.login !== null && keys.some((k) => k !== caller.name)) throw loginShared(caller.login, keys);
    }
    next();
  };
}

/** The routes under /olp/me/login, with the guard to put before those that change anything. */
export function createMyLoginRoutes(m: MemberLoginsDeps, plans: Plans | undefined) {
  const view = (res: Response) => toMyLoginView(m, plans, callerOf(m, res));
  const removeRoute = (cli: LoginCli) => (_req: Request, res: Response) => {
    runRemoveCredential(connectDeps(m, res), callerOf(m, res), cli);
    res.json(view(res));
  };
  return {
    guard: guard(m),
    get(_req: Request, res: Response): void {
      res.json(view(res));
    },
    async putClaude(req: Request, res: Response): Promise<void> {
      const { secret, check } = parseClaudeLogin(req.body);
      await runConnectClaude(connectDeps(m, res), callerOf(m, res), secret, check);
      res.json(view(res));
    },
    async putCodex(req: Request, res: Response): Promise<void> {
      const { kind, secret } = parseCodexLogin(req.body);
      await runConnectCodex(connectDeps(m, res), callerOf(m, res), kind, secret);
      res.json(view(res));
    },
    async startDevice(req: Request, res: Response): Promise<void> {
      parseDeviceStart(req.body);
      const device = await runStartDevice(connectDeps(m, res), callerOf(m, res));
      res.status(202).json({ device });
    },
    getDevice(_req: Request, res: Response): void {
      const c = callerOf(m, res);
      const device = m.connect.devices.find(c.login, c.keyId);
      if (!device) throw loginPartNotFound('No device sign-in of your login is running or recently ended.');
      res.json({ device });
    },
    async cancelDevice(_req: Request, res: Response): Promise<void> {
      const c = callerOf(m, res);
      const device = await m.connect.devices.cancel(c.login, c.keyId);
      if (!device) throw loginPartNotFound('No device sign-in of your login is running.');
      res.json({ device });
    },
    removeClaude: removeRoute('claude'),
    removeCodex: removeRoute('codex'),
  };
}

/** Mounts /olp/me/login (behind the /olp key check already in place). */
export function addMyLoginRoutes(
  app: Express,
  m: MemberLoginsDeps | undefined,
  plans: Plans | undefined,
  json: RequestHandler,
): void {
  if (!m) return;
  const r = createMyLoginRoutes(m, plans);
  app.get('/olp/me/login', r.get);
  app.put('/olp/me/login/claude', r.guard, json, r.putClaude);
  app.put('/olp/me/login/codex', r.guard, json, r.putCodex);
  app.post('/olp/me/login/codex/device', r.guard, json, r.startDevice);
  app.get('/olp/me/login/codex/device', r.getDevice);
  app.delete('/olp/me/login/codex/device', r.guard, r.cancelDevice);
  app.delete('/olp/me/login/claude', r.guard, r.removeClaude);
  app.delete('/olp/me/login/codex', r.guard, r.removeCodex);
}
