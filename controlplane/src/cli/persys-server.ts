#!/usr/bin/env node
// `persys-server` is `persys server`.
process.argv.splice(2, 0, "server");
await import("./persys.js");
