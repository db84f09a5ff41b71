import { readdirSync } from "node:fs";
import { join, relative, sep } from "node:path";
import type { Server } from "@grpc/grpc-js";
import { loadSync, type PackageDefinition } from "@grpc/proto-loader";
import { ReflectionService } from "@grpc/reflection";
import { protoPath as healthProtoPath } from "grpc-health-check";
import { protoDir } from "./schema-package.js";

/**
 * The package definition of every `.proto` under `schema/proto` (and the gRPC health service), loaded
 * with proto-loader, for server reflection. Loaded once per process.
 *
 * @throws Error when the proto directory cannot be found or a file does not parse.
 */
export function persysPackageDefinition(dir: string = protoDir()): PackageDefinition {
  const files = protoFiles(dir);
  if (files.length === 0) throw new Error(`no .proto files under ${dir}`);
  return loadSync([...files, healthProtoPath], { includeDirs: [dir], keepCase: true });
}

function protoFiles(dir: string): string[] {
  return readdirSync(dir, { recursive: true, encoding: "utf8" })
    .filter((file) => file.endsWith(".proto"))
    .map((file) => relative(dir, join(dir, file)).split(sep).join("/"))
    .sort();
}

let cached: PackageDefinition | undefined;

/**
 * Adds gRPC server reflection (v1 and v1alpha) for the Persys services, so `grpcurl list` and
 * `grpcurl describe` work without local protos.
 */
export function addReflection(server: Pick<Server, "addService">): void {
  cached ??= persysPackageDefinition();
  new ReflectionService(cached).addToServer(server);
}
