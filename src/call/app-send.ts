/**
 * `MultipathCall.send` to several participants: each session's app data
 * channel takes the message or says why not; errors map to {@link CallError}
 * codes. Split from ./multipath-call.ts to keep it readable.
 */
import { AppDataError } from '../engine/app-data-types.js';
import type { PeerSession } from './peer-session.js';
import { CallError } from './types.js';

/**
 * Queue or send `data` to every target. Size and type errors throw at once
 * (the same for every participant); a participant that cannot take it
 * (window full, no path) is reported through `onError` when another took it.
 * @returns how many participants took it.
 * @throws CallError 'data-too-large' | 'bad-data'; the first other error when none took it.
 */
export function sendToEach(targets: PeerSession[], data: Uint8Array | string, reliable: boolean, onError: (e: CallError) => void): number {
  let sent = 0;
  const errors: CallError[] = [];
  for (const s of targets) {
    try {
      s.appData.send(data, reliable);
      sent++;
    } catch (e) {
      if (!(e instanceof AppDataError)) throw e;
      const code = e.code === 'too-large' ? 'data-too-large' : e.code === 'window-full' ? 'data-window-full' : e.code === 'no-path' ? 'not-connected' : 'bad-data';
      const err = new CallError(code, `send to ${s.remoteId}: ${e.message}`);
      if (code === 'data-too-large' || code === 'bad-data') throw err;
      errors.push(err);
    }
  }
  if (sent === 0 && errors.length > 0) throw errors[0];
  for (const e of errors) onError(e);
  return sent;
}
