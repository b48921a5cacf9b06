/**
 * The toolbar popup (popup.html): per-path stats of the running call, asked of
 * the call page once a second over chrome.runtime messaging, and the
 * on-demand announcement to the active tab when that page opted in.
 */
import { announceToActiveTab, announceToTab } from './inject.js';
import { type CallSnapshot, STATS_REQUEST } from './protocol.js';

const $ = <T extends HTMLElement>(id: string): T => document.getElementById(id) as T;
const fmt = (v: number | undefined, digits: number, scale = 1): string => (v === undefined || !Number.isFinite(v) ? '–' : (v / scale).toFixed(digits));

/** Last snapshot shown (tests read it as `window.__mprtcPopup.last`; they drive `announceToTab` on a tab the action was invoked on). */
const state: { last: CallSnapshot | undefined; polls: number; announceToTab: typeof announceToTab } = { last: undefined, polls: 0, announceToTab };
(window as unknown as { __mprtcPopup: typeof state }).__mprtcPopup = state;

async function poll(): Promise<void> {
  state.polls++;
  let snap: CallSnapshot | undefined;
  try {
    snap = (await chrome.runtime.sendMessage({ type: STATS_REQUEST })) as CallSnapshot | undefined;
  } catch {
    // "Receiving end does not exist": no call page is open.
    snap = undefined;
  }
  state.last = snap;
  render(snap);
}

function render(s: CallSnapshot | undefined): void {
  if (!s) {
    $('call-status').textContent = 'no call page open';
    $('paths-table').innerHTML = '';
    $('qoe').textContent = '';
    return;
  }
  $('call-status').textContent = `room ${s.room || '–'}: ${s.phase}${s.error ? ` (last error: ${s.error})` : ''}`;
  const head = '<tr><th>path</th><th>state</th><th>RTT ms</th><th>sent Mbps</th><th>estimate Mbps</th><th>loss %</th><th>pkts in</th></tr>';
  const rows = s.paths.map(
    (p) =>
      `<tr><td>${p.id}</td><td>${escapeHtml(p.state)}</td><td>${fmt(p.rttMs, 0)}</td><td>${fmt(p.sendRateBps, 2, 1e6)}</td><td>${fmt(p.estimateBps, 2, 1e6)}</td><td>${fmt(p.lossPct, 1)}</td><td>${p.packetsReceived}</td></tr>`,
  );
  $('paths-table').innerHTML = s.paths.length ? head + rows.join('') : '';
  $('qoe').textContent = `received ${fmt(s.fps, 1)} fps, ${s.framesDecoded} frames decoded, freezes ${s.freezeCount} (${fmt(s.freezeTotalMs, 0)} ms); sent ${s.framesEncoded} frames`;
}

function escapeHtml(s: string): string {
  return s.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
}

$('open-call').addEventListener('click', () => void chrome.tabs.create({ url: chrome.runtime.getURL('call.html') }));
$('announce').addEventListener('click', () => {
  void announceToActiveTab().then((r) => ($('announce-status').textContent = r.message));
});

void poll();
setInterval(() => void poll(), 1000);
