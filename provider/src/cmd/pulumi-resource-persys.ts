#!/usr/bin/env node
/**
 * The provider plugin process `pulumi-resource-persys`: the engine starts it (through the launcher
 * `writePluginLauncher` writes, or `pulumi plugin install resource persys 0.1.0 -f <folder>`) with
 * its own address as the first argument, and reads the gRPC port from the first stdout line.
 */
import { PersysProvider } from "../persys-provider.js";
import { serveResourceProvider } from "../plugin/provider-server.js";

await serveResourceProvider(new PersysProvider());
