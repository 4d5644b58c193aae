/**
 * Debian's headless Chromium for the browser tests, driven by playwright-core: where it is, whether it is there
 * (a test without it is skipped and says why), and one way to launch it.
 */
import { existsSync } from 'node:fs';
import { chromium, type Browser } from 'playwright-core';

export const chromiumPath = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';

/** Whether Chromium is installed; when not, warns that `what` is skipped. */
export function chromiumAvailable(what: string): boolean {
  const available = existsSync(chromiumPath);
  if (!available)
    console.warn(
      `${what} skipped: no Chromium at ${chromiumPath} (install Debian's chromium package, or set CHROMIUM_PATH)`,
    );
  return available;
}

/** Without a sandbox or GPU and with /tmp for shared memory: as root in a container, as CI runs. */
export function launchChromium(): Promise<Browser> {
  return chromium.launch({
    executablePath: chromiumPath,
    args: ['--no-sandbox', '--disable-gpu', '--disable-dev-shm-usage'],
  });
}
