import { describe, expect, it } from "vitest";
import { classifyDockerError, type DockerOperation } from "./docker-errors.js";

const http = (statusCode: number, message: string) =>
  Object.assign(new Error(`(HTTP code ${statusCode}) server error - ${message}`), { statusCode, json: { message } });

describe("classifyDockerError", () => {
  it.each<{ name: string; error: unknown; op: DockerOperation; code: string; retryable: boolean; text: string }>([
    {
      name: "socket missing → RUNTIME_UNAVAILABLE",
      error: Object.assign(new Error("connect ENOENT /var/run/docker.sock"), { code: "ENOENT" }),
      op: "create",
      code: "RUNTIME_UNAVAILABLE",
      retryable: true,
      text: "Docker at /run/d.sock does not answer: connect ENOENT",
    },
    {
      name: "registry host unknown → IMAGE_NOT_FOUND with the registry's text",
      error: http(
        500,
        'Get "https://registry-1.docker.io/v2/": dial tcp: lookup registry-1.docker.io on 10.0.0.53:53: no such host',
      ),
      op: "pull",
      code: "IMAGE_NOT_FOUND",
      retryable: false,
      text: 'image app:1 is not on this node and no registry has it: Get "https://registry-1.docker.io/v2/"',
    },
    {
      name: "manifest unknown → IMAGE_NOT_FOUND",
      error: new Error("manifest for app:1 not found: manifest unknown: manifest unknown"),
      op: "pull",
      code: "IMAGE_NOT_FOUND",
      retryable: false,
      text: "manifest unknown",
    },
    {
      name: "registry refuses the connection → IMAGE_PULL_FAILED",
      error: http(500, 'Get "http://localhost:5999/v2/": dial tcp 127.0.0.1:5999: connect: connection refused'),
      op: "pull",
      code: "IMAGE_PULL_FAILED",
      retryable: true,
      text: 'pulling image app:1 failed: Get "http://localhost:5999/v2/": dial tcp 127.0.0.1:5999: connect: connection refused',
    },
    {
      name: "registry 5xx → IMAGE_PULL_FAILED",
      error: new Error("received unexpected HTTP status: 503 Service Unavailable"),
      op: "pull",
      code: "IMAGE_PULL_FAILED",
      retryable: true,
      text: "503 Service Unavailable",
    },
    {
      name: "host port taken by another process → PORT_CONFLICT naming the port",
      error: http(
        500,
        "driver failed programming external connectivity on endpoint web-0 (abc): Error starting userland proxy: listen tcp4 0.0.0.0:45235: bind: address already in use",
      ),
      op: "start",
      code: "PORT_CONFLICT",
      retryable: false,
      text: "host port 0.0.0.0:45235 is already in use on this node",
    },
    {
      name: "host port taken by another container → PORT_CONFLICT",
      error: http(
        500,
        "driver failed programming external connectivity on endpoint b: Bind for 0.0.0.0:8080 failed: port is already allocated",
      ),
      op: "start",
      code: "PORT_CONFLICT",
      retryable: false,
      text: "host port 0.0.0.0:8080 is already in use",
    },
    {
      name: "image vanished before create → IMAGE_NOT_FOUND",
      error: http(404, "No such image: app:1"),
      op: "create",
      code: "IMAGE_NOT_FOUND",
      retryable: false,
      text: "No such image: app:1",
    },
    {
      name: "missing bind source → INVALID_SPEC",
      error: http(400, 'invalid mount config for type "bind": bind source path does not exist: /nope'),
      op: "create",
      code: "INVALID_SPEC",
      retryable: false,
      text: "bind source path does not exist: /nope",
    },
    {
      name: "entrypoint missing in the image → RUNTIME_ERROR, not retryable",
      error: http(400, 'OCI runtime create failed: exec: "nope": executable file not found in $PATH: unknown'),
      op: "start",
      code: "RUNTIME_ERROR",
      retryable: false,
      text: "the container's command cannot run",
    },
    {
      name: "full disk → RUNTIME_UNAVAILABLE",
      error: http(500, "write /var/lib/docker/tmp/x: no space left on device"),
      op: "create",
      code: "RUNTIME_UNAVAILABLE",
      retryable: true,
      text: "the node's disk is full",
    },
    {
      name: "anything else → RUNTIME_ERROR, retryable",
      error: http(500, "something odd"),
      op: "create",
      code: "RUNTIME_ERROR",
      retryable: true,
      text: "Docker create failed: something odd",
    },
  ])("$name", ({ error, op, code, retryable, text }) => {
    const e = classifyDockerError(error, op, { image: "app:1", socket: "/run/d.sock" });
    expect({ code: e.code, retryable: e.retryable }).toEqual({ code, retryable });
    expect(e.message).toContain(text);
  });
});
