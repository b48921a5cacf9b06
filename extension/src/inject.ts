/**
 * On-demand injection into the active tab, only when the page opted in with
 * `<meta name="multipath-rtc" content="allow">`. Needs `activeTab` (granted
 * when the user opens the popup on that tab) and `scripting`; no host
 * permissions. Step 1 runs a read-only probe in the extension's isolated world
 * that returns whether the meta tag is there; step 2, only if it is, runs
 * `announce.js`, which posts one {@link PresenceMessage} to the page.
 */
import { OPT_IN_META } from './protocol.js';

export interface AnnounceResult {
  /** opted-out: the page has no opt-in meta; no-access: the tab cannot be scripted (chrome://, no activeTab grant). */
  outcome: 'announced' | 'opted-out' | 'no-tab' | 'no-access';
  message: string;
}

/** Whether the document carries the opt-in meta (runs in the page's isolated world; must be self-contained). */
function pageOptedIn(name: string, content: string): boolean {
  for (const m of document.querySelectorAll('meta[name]')) if (m.getAttribute('name') === name && m.getAttribute('content')?.trim().toLowerCase() === content) return true;
  return false;
}

/** Announce the extension to the active tab of the current window if it opted in. Never throws. */
export async function announceToActiveTab(): Promise<AnnounceResult> {
  const [tab] = await chrome.tabs.query({ active: true, currentWindow: true });
  if (tab?.id === undefined) return { outcome: 'no-tab', message: 'no active tab' };
  return announceToTab(tab.id);
}

/** Same as {@link announceToActiveTab} for a given tab id. Never throws. */
export async function announceToTab(tabId: number): Promise<AnnounceResult> {
  try {
    const [probe] = await chrome.scripting.executeScript({ target: { tabId }, func: pageOptedIn, args: [OPT_IN_META.name, OPT_IN_META.content] });
    if (probe?.result !== true) return { outcome: 'opted-out', message: 'this page did not opt in (<meta name="multipath-rtc" content="allow">)' };
    await chrome.scripting.executeScript({ target: { tabId }, files: ['announce.js'] });
    return { outcome: 'announced', message: 'announced to this page' };
  } catch (e) {
    return { outcome: 'no-access', message: `cannot script this tab: ${e instanceof Error ? e.message : String(e)}` };
  }
}
