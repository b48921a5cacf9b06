/**
 * Injected into an opted-in page by the popup (chrome.scripting.executeScript,
 * files: ['announce.js']), after a probe found the opt-in meta. It only tells
 * the page the extension is here: one window.postMessage, nothing else (no
 * listeners, no DOM changes). Classic script: no imports.
 */
window.postMessage({ source: 'multipath-rtc-extension', type: 'present', version: chrome.runtime.getManifest().version }, '*');
