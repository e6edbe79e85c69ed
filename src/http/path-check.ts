import type { NextFunction, Request, Response } from 'express';
import { toInvalidPath } from './errors.js';

/**
 * Bad percent-encoding anywhere in the path is a 400 `invalid_path` on every route, before
 * auth and routing (otherwise it is a 404 here and a route parameter's decode error there).
 */
export function createPathCheck() {
  return (req: Request, _res: Response, next: NextFunction): void => {
    try {
      decodeURIComponent(req.path);
    } catch (err) {
      throw toInvalidPath(req.path, err);
    }
    next();
  };
}
