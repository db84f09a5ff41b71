import { describe, expect, it } from "vitest";
import { parseEventLine } from "./vm-events.js";

describe("parseEventLine (virsh event --all --loop)", () => {
  it.each([
    [
      "lifecycle",
      "event 'lifecycle' for domain 'web-0.n1': Stopped Crashed",
      { domain: "web-0.n1", type: "lifecycle", event: "Stopped", detail: "Crashed" },
    ],
    [
      "lifecycle without detail",
      "event 'lifecycle' for domain 'web-0.n1': Started",
      { domain: "web-0.n1", type: "lifecycle", event: "Started", detail: "" },
    ],
    [
      "reboot",
      "event 'reboot' for domain 'db-0.n1'",
      { domain: "db-0.n1", type: "reboot", event: "Reboot", detail: "" },
    ],
    ["another event type", "event 'balloon-change' for domain 'db-0.n1': 262144KiB", undefined],
    ["noise", "error: Options --all and --event are mutually exclusive", undefined],
  ])("%s", (_name, line, expected) => {
    expect(parseEventLine(line)).toEqual(expected);
  });
});
