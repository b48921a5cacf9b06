/**
 * Service worker. It keeps no state (MV3 stops idle workers): the call lives in
 * call.html and the popup asks that page directly. The worker exists so the
 * extension has a background context, which is how automation (and
 * chrome://extensions) find its id.
 */
chrome.runtime.onInstalled.addListener((details) => console.info(`multipath-rtc extension ${details.reason}: open the call page from the toolbar popup`));
