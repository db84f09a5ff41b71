import { describe, expect, it } from "vitest";
import { type CliIo, colours } from "./cli-io.js";

const io = (tty: boolean, env: Record<string, string>): CliIo => ({
  stdout: { isTTY: tty } as never,
  stderr: process.stderr,
  stdin: process.stdin,
  env,
  now: () => new Date(),
});

describe("colours", () => {
  it.each([
    { name: "on a terminal", tty: true, env: {}, flag: undefined, enabled: true },
    { name: "not a terminal", tty: false, env: {}, flag: undefined, enabled: false },
    { name: "NO_COLOR set", tty: true, env: { NO_COLOR: "" }, flag: undefined, enabled: false },
    { name: "--no-color", tty: true, env: {}, flag: false, enabled: false },
    { name: "TERM=dumb", tty: true, env: { TERM: "dumb" }, flag: undefined, enabled: false },
    { name: "FORCE_COLOR into a pipe", tty: false, env: { FORCE_COLOR: "1" }, flag: undefined, enabled: true },
    { name: "FORCE_COLOR=0", tty: true, env: { FORCE_COLOR: "0" }, flag: undefined, enabled: true },
  ])("$name: $enabled", ({ tty, env, flag, enabled }) => {
    const c = colours(io(tty, env as Record<string, string>), flag);
    expect(c.enabled).toBe(enabled);
    expect(c.red("x")).toBe(enabled ? "\u001b[31mx\u001b[39m" : "x");
  });
});
