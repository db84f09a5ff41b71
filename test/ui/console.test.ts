/**
 * The web console in a real browser against `persys up` with its local agent on Docker: sign in (when
 * the server wants a token) → the local node appears with its capacity → apply a container from the
 * plan page → it turns running live → its diagnosis grid shows the chosen node and the reasons →
 * stop it from the console → the event shows. Screenshots of every view go to test-results/ui/.
 * Needs agent/dist and ui/dist (npm run build), dockerd and Debian's chromium.
 */
import { join } from "node:path";
import type { Browser, Page } from "playwright-core";
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { BUSYBOX_IMAGE, requireDocker } from "../agent/support/docker-fixtures.js";
import { launchChromium, resetScreenshots, SCREENSHOTS, screenshot } from "./support/browser.js";
import { type PersysUp, startPersysUp } from "./support/persys-up.js";

let up: PersysUp;
let browser: Browser;
let page: Page;
const workloadId = `uiweb-${Date.now().toString(36)}`;
const browserErrors: string[] = [];
// Browser globals of the page.evaluate callbacks (this file is type-checked without the DOM lib).
declare const window: any;
declare const document: any;

beforeAll(async () => {
  await requireDocker();
  resetScreenshots();
  up = await startPersysUp();
  browser = await launchChromium();
  const context = await browser.newContext({ ignoreHTTPSErrors: up.https, viewport: { width: 1280, height: 900 } });
  page = await context.newPage();
  page.on("pageerror", (e) => browserErrors.push(e.message));
}, 180_000);

afterAll(async () => {
  await up?.rest("DELETE", `/v1/workloads/${workloadId}?allowMissing=true`).catch(() => {});
  await browser?.close();
  await up?.stop();
}, 60_000);

describe("web console", () => {
  // The steps are one flow: after a failed step the next ones fail at once, naming it.
  let failedStep: string | undefined;
  beforeEach(() => {
    if (failedStep) throw new Error(`not run: the earlier step "${failedStep}" failed`);
  });

  afterEach(async (context) => {
    if (context.task.result?.state !== "fail" || !page || failedStep) return;
    failedStep = context.task.name;
    const name = context.task.name.replace(/[^a-z0-9]+/gi, "-").slice(0, 60);
    await screenshot(page, `failed-${name}`).catch(() => {});
    console.error(
      `page ${page.url()}:\n${(
        await page
          .locator("body")
          .textContent()
          .catch(() => "")
      )?.slice(0, 3000)}`,
    );
  });

  it("signs in and shows the local node with its capacity", async () => {
    await page.goto(`${up.url}/ui/`);
    if (up.token) {
      // a wrong token is refused with the server's message, then the right one signs in
      await page.getByLabel("API token").fill("not-a-token");
      await page.getByRole("button", { name: "Sign in" }).click();
      await expect.poll(() => page.getByRole("alert").textContent()).toMatch(/UNAUTHENTICATED/);
      await page.getByLabel("API token").fill(up.token);
      await screenshot(page, "sign-in");
      await page.getByRole("button", { name: "Sign in" }).click();
    }
    const card = page.locator(`article[data-node-id="${up.nodeId}"]`);
    await card.waitFor({ timeout: 30_000 });
    if (!up.token) expect(await page.locator("header.top").textContent()).toContain("no sign-in needed");
    await expect.poll(() => card.textContent()).toMatch(/ready/);
    const node = (await up.rest("GET", `/v1/nodes/${up.nodeId}`)).body.node;
    const text = (await card.textContent()) ?? "";
    expect(text).toContain("cpu");
    expect(text).toContain("memory");
    expect(text).toContain("container");
    const allocatableMib = node.allocatable.memoryMib as number;
    const shown = allocatableMib >= 1024 ? `${(allocatableMib / 1024).toFixed(1)} GiB` : `${allocatableMib} MiB`;
    expect(text).toContain(shown);
    await screenshot(page, "overview");
  });

  it("plans a container on the plan page, shows where it would land, and applies it", async () => {
    await page.getByRole("link", { name: "Plan" }).click();
    const spec = [
      `id: ${workloadId}`,
      "kind: WORKLOAD_KIND_CONTAINER",
      "resources:",
      "  cpuMillicores: 50",
      "  memoryMib: 32",
      "labels:",
      "  suite: ui",
      "container:",
      `  image: ${BUSYBOX_IMAGE}`,
      "  stopTimeoutSeconds: 1",
    ].join("\n");
    await page.getByLabel("Workload spec").fill(spec);
    await page.getByRole("button", { name: /^Plan/ }).click();
    const result = page.getByTestId("plan-result");
    await result.waitFor();
    expect(await result.getByTestId("plan-node").first().textContent()).toBe(up.nodeId);
    expect(await result.textContent()).toContain("Schedulable");
    await expect.poll(() => result.locator(`tr[data-winner="true"]`).getAttribute("data-node-id")).toBe(up.nodeId);
    await screenshot(page, "plan");
    await page.getByRole("button", { name: "Apply" }).click();
    await page.waitForURL(`**/ui/workloads/${workloadId}`);
  });

  it("watches it turn running live and explains the placement in the grid", async () => {
    const state = page.getByTestId("workload-state");
    await expect.poll(() => state.textContent(), { timeout: 60_000 }).toBe("running");
    expect(await page.getByTestId("replica-state-0").textContent()).toBe("running");
    const diagnosis = page.getByTestId("diagnosis");
    await expect.poll(() => diagnosis.getByTestId("winner").textContent(), { timeout: 15_000 }).toBe(up.nodeId);
    expect(((await diagnosis.getByTestId("diagnosis-message").textContent()) ?? "").length).toBeGreaterThan(0);
    const row = diagnosis.locator(`tr[data-node-id="${up.nodeId}"]`);
    expect(await row.getAttribute("data-winner")).toBe("true");
    // The row is what the scheduler recorded for the decision: the chosen node passed every filter.
    const cells = await row.locator("td.grid-cell").allTextContents();
    expect(cells.length).toBeGreaterThan(0);
    expect(cells.every((c) => c.startsWith("✓"))).toBe(true);
    expect(await diagnosis.getByTestId("scores").textContent()).toContain(up.nodeId);
    await screenshot(page, "workload-detail");
    await diagnosis.screenshot({ path: join(SCREENSHOTS, "diagnosis.png") });
  });

  it("lists it on the workloads page, filtered by label", async () => {
    await page.getByRole("link", { name: "Workloads" }).click();
    await page.getByLabel("Labels").fill("suite=ui");
    const list = page.getByRole("listbox", { name: /Workloads/ });
    await expect.poll(() => list.textContent()).toContain(workloadId);
    await screenshot(page, "workloads");
    // keyboard: focus the list, move to the first row, Enter opens it
    await list.focus();
    await page.keyboard.press("ArrowDown");
    await page.keyboard.press("Enter");
    await page.waitForURL(`**/ui/workloads/${workloadId}`);
  });

  it("stops it from the console and shows the event", async () => {
    await page.getByRole("button", { name: "Stop", exact: true }).click();
    await expect.poll(() => page.getByTestId("workload-state").textContent(), { timeout: 60_000 }).toBe("stopped");
    // the event the stop produced (its wording is the control plane's: match on the word "stopped")
    const stoppedEvent = async () => {
      const events = (await up.rest("GET", `/v1/workloads/${workloadId}/events?pageSize=200`)).body.events ?? [];
      return events.find((e: { type: string; message?: string }) => /stopped/i.test(`${e.type} ${e.message ?? ""}`));
    };
    await expect.poll(stoppedEvent, { timeout: 30_000 }).toBeTruthy();
    const event = (await stoppedEvent()) as { type: string; message: string };
    const timeline = page.getByTestId("workload-events");
    await expect.poll(() => timeline.textContent(), { timeout: 15_000 }).toContain(event.message);
    await page.getByRole("link", { name: "Events" }).click();
    await page.getByLabel("Workload").fill(workloadId);
    await page.getByLabel("Message").fill("stopped");
    const events = page.getByRole("region", { name: /Events, newest first/ });
    await expect.poll(() => events.textContent(), { timeout: 15_000 }).toContain(event.message);
    expect(await events.textContent()).toContain(event.type);
    await screenshot(page, "events");
  });

  it("stays readable in a narrow window", async () => {
    await page.setViewportSize({ width: 380, height: 800 });
    await page.getByRole("link", { name: "Cluster" }).click();
    await page.locator(`article[data-node-id="${up.nodeId}"]`).waitFor();
    const overflow = await page.evaluate(() => document.documentElement.scrollWidth - window.innerWidth);
    expect(overflow).toBeLessThanOrEqual(1);
    await screenshot(page, "overview-narrow");
    expect(browserErrors).toEqual([]);
  });

  it("forgets the token: the next load asks for it again", async () => {
    if (!up.token) return; // a server without authentication has nothing to sign out of
    await page.getByRole("button", { name: "Sign out" }).click();
    await page.getByLabel("API token").waitFor();
    await page.reload();
    await page.getByLabel("API token").waitFor();
    expect(await page.evaluate(() => window.sessionStorage.getItem("persys.token"))).toBeNull();
  });
});

describe("web console on a server without authentication", () => {
  it("opens without sign-in when GET /v1/nodes answers without a token", async () => {
    const open = await startPersysUp({ extraArgs: ["--insecure"] });
    try {
      expect(open.token).toBeUndefined();
      const tab = await browser.newPage();
      await tab.goto(`${open.url}/ui/`);
      await tab.locator(`article[data-node-id="${open.nodeId}"]`).waitFor({ timeout: 30_000 });
      expect(await tab.locator("header.top").textContent()).toContain("no sign-in needed");
      expect(await tab.getByLabel("API token").count()).toBe(0);
      await tab.close();
    } finally {
      await open.stop();
    }
  });
});
