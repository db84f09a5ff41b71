import { PersysError } from "@persys/schema";
import { describe, expect, it } from "vitest";
import { channelCredentials, parseEndpoint } from "./client-options.js";

describe("parseEndpoint", () => {
  it.each([
    { endpoint: "127.0.0.1:7070", address: "127.0.0.1:7070", tls: undefined },
    { endpoint: "cp.example", address: "cp.example:7070", tls: undefined },
    { endpoint: "https://cp.example:7443/", address: "cp.example:7443", tls: true },
    { endpoint: "http://localhost:9000", address: "localhost:9000", tls: false },
    { endpoint: "grpc://10.0.0.1", address: "10.0.0.1:7070", tls: false },
    { endpoint: "[::1]:7070", address: "[::1]:7070", tls: undefined },
    { endpoint: "  cp:1  ", address: "cp:1", tls: undefined },
  ])("$endpoint → $address", ({ endpoint, address, tls }) => {
    expect(parseEndpoint(endpoint)).toEqual({ address, tls });
  });

  it.each([
    { endpoint: "", reason: "is empty" },
    { endpoint: "ftp://x:1", reason: "unknown scheme" },
    { endpoint: "host:99999", reason: "must be 1..65535" },
    { endpoint: "host:http", reason: "must be 1..65535" },
    { endpoint: "host:1/path", reason: "without a path" },
    { endpoint: "::1:7070", reason: "IPv6" },
  ])("refuses $endpoint with INVALID_CONFIG ($reason)", ({ endpoint, reason }) => {
    const error = (() => {
      try {
        parseEndpoint(endpoint);
      } catch (e) {
        return e;
      }
    })();
    expect(error).toBeInstanceOf(PersysError);
    expect((error as PersysError).code).toBe("INVALID_CONFIG");
    expect((error as PersysError).details[0]?.reason).toContain(reason);
  });
});

describe("channelCredentials", () => {
  it("is plaintext unless TLS is asked for by option or scheme", () => {
    expect(channelCredentials(undefined, undefined)._isSecure()).toBe(false);
    expect(channelCredentials(undefined, true)._isSecure()).toBe(true);
    expect(channelCredentials(true, undefined)._isSecure()).toBe(true);
    expect(channelCredentials(false, true)._isSecure()).toBe(false);
  });

  it("refuses a client certificate without its key", () => {
    expect(() => channelCredentials({ clientCert: "-----BEGIN CERTIFICATE-----\nx\n" }, undefined)).toThrow(
      /clientKey/,
    );
  });

  it("names an unreadable PEM file", () => {
    expect(() => channelCredentials({ caCert: "/nonexistent/ca.pem" }, undefined)).toThrow(
      /cannot read \/nonexistent\/ca.pem/,
    );
  });
});
