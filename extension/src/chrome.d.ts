/**
 * The few chrome.* extension APIs the extension uses (a subset of
 * @types/chrome, written out to avoid a dependency for five functions).
 */
declare namespace chrome {
  namespace runtime {
    interface MessageSender {
      id?: string;
      url?: string;
    }
    interface InstalledDetails {
      reason: 'install' | 'update' | 'chrome_update' | 'shared_module_update';
    }
    function sendMessage(message: unknown): Promise<unknown>;
    function getURL(path: string): string;
    function getManifest(): { version: string; name: string };
    const onMessage: {
      addListener(cb: (message: unknown, sender: MessageSender, sendResponse: (response?: unknown) => void) => boolean | undefined): void;
    };
    const onInstalled: { addListener(cb: (details: InstalledDetails) => void): void };
  }
  namespace tabs {
    interface Tab {
      id?: number;
      url?: string;
    }
    function query(q: { active?: boolean; currentWindow?: boolean; url?: string }): Promise<Tab[]>;
    function create(p: { url: string }): Promise<Tab>;
  }
  namespace scripting {
    interface InjectionResult<T> {
      frameId: number;
      result?: T;
    }
    function executeScript<A extends unknown[], R>(injection: { target: { tabId: number }; func: (...args: A) => R; args: A }): Promise<Array<InjectionResult<Awaited<R>>>>;
    function executeScript(injection: { target: { tabId: number }; files: string[] }): Promise<Array<InjectionResult<unknown>>>;
  }
}
