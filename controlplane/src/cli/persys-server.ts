#!/usr/bin/env -S node --max-semi-space-size=64
// `persys-server` is `persys server`.
process.argv.splice(2, 0, "server");
await import("./persys.js");
