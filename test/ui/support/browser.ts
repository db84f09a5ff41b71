/**
 * Debian's chromium driven by playwright-core (no browser download): headless, `--no-sandbox` (the
 * tests run as root). Screenshots go to test-results/ui/.
 */
import { existsSync, mkdirSync, rmSync } from "node:fs";
import { join, resolve } from "node:path";
import { type Browser, chromium, type Page } from "playwright-core";

export const CHROMIUM = process.env.PERSYS_CHROMIUM ?? "/usr/bin/chromium";
export const SCREENSHOTS = resolve(import.meta.dirname, "../../../test-results/ui");

/** Launches headless chromium, or fails naming the Debian package when it is not installed. */
export async function launchChromium(): Promise<Browser> {
  if (!existsSync(CHROMIUM)) {
    throw new Error(`${CHROMIUM} is missing: apt-get install chromium (scripts/test.sh installs it)`);
  }
  return chromium.launch({
    executablePath: CHROMIUM,
    headless: true,
    args: ["--no-sandbox", "--disable-dev-shm-usage", "--disable-gpu"],
  });
}

/** Saves a full-page screenshot as test-results/ui/<name>.png and returns its path. */
export async function screenshot(page: Page, name: string): Promise<string> {
  mkdirSync(SCREENSHOTS, { recursive: true });
  const path = join(SCREENSHOTS, `${name}.png`);
  await page.screenshot({ path, fullPage: true });
  return path;
}

/** Empties test-results/ui/ so the screenshots there are this run's. */
export function resetScreenshots(): void {
  rmSync(SCREENSHOTS, { recursive: true, force: true });
  mkdirSync(SCREENSHOTS, { recursive: true });
}
