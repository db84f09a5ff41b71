import { Metadata, status } from "@grpc/grpc-js";
import { api, errorCodes, PersysError } from "@persys/schema";
import { describe, expect, it } from "vitest";
import { codeForGrpcStatus, PERSYS_ERROR_TRAILER, persysErrorFromServiceError, toGrpcStatus } from "./grpc-error.js";
import { classifyError } from "./wire-error.js";

describe("toGrpcStatus / persysErrorFromServiceError", () => {
  it.each(errorCodes)("round-trips %s with its registry status", (code) => {
    const error = new PersysError(code, `text for ${code}`, {
      details: [{ path: "a.b[0]", reason: "bad" }],
      retryable: true,
    });
    const wire = toGrpcStatus(error);
    expect(wire.code).toBe(error.grpcStatus);
    expect(wire.details).toBe(error.message);
    const back = persysErrorFromServiceError({ code: wire.code, details: wire.details, metadata: wire.metadata });
    expect(back.toBody()).toEqual(error.toBody());
  });

  it.each([
    { grpc: status.UNAVAILABLE, code: "UNAVAILABLE" },
    { grpc: status.DEADLINE_EXCEEDED, code: "DEADLINE_EXCEEDED" },
    { grpc: status.CANCELLED, code: "CANCELLED" },
    { grpc: status.UNIMPLEMENTED, code: "INTERNAL" },
    { grpc: status.ABORTED, code: "CONFLICT" },
    { grpc: status.UNAUTHENTICATED, code: "UNAUTHENTICATED" },
  ])("without a trailer, gRPC status $grpc becomes $code", ({ grpc, code }) => {
    const back = persysErrorFromServiceError({ code: grpc, details: "from grpc-js", metadata: new Metadata() });
    expect([back.code, back.message]).toEqual([code, "from grpc-js"]);
    expect(codeForGrpcStatus(grpc)).toBe(code);
  });

  it("keeps the message when the trailer holds an unknown code", () => {
    const metadata = new Metadata();
    metadata.set(
      PERSYS_ERROR_TRAILER,
      Buffer.from(
        api.Error.encode({ code: 999 as api.ErrorCode, message: "newer peer", details: [], retryable: true }).finish(),
      ),
    );
    const back = persysErrorFromServiceError({ code: status.INTERNAL, details: "x", metadata });
    expect([back.code, back.message, back.retryable]).toEqual(["INTERNAL", "newer peer", true]);
  });

  it("falls back to the status when the trailer is garbage", () => {
    const metadata = new Metadata();
    metadata.set(PERSYS_ERROR_TRAILER, Buffer.from([0xff, 0xff, 0xff]));
    expect(persysErrorFromServiceError({ code: status.NOT_FOUND, details: "gone", metadata }).code).toBe("NOT_FOUND");
  });
});

describe("classifyError", () => {
  it.each([
    { name: "a PersysError passes", thrown: new PersysError("CONFLICT", "c"), code: "CONFLICT", unexpected: false },
    {
      name: "an AbortError is CANCELLED",
      thrown: Object.assign(new Error("aborted"), { name: "AbortError" }),
      code: "CANCELLED",
      unexpected: false,
    },
    { name: "anything else is INTERNAL", thrown: new RangeError("secret detail"), code: "INTERNAL", unexpected: true },
    { name: "a thrown string is INTERNAL", thrown: "oops", code: "INTERNAL", unexpected: true },
  ])("$name", ({ thrown, code, unexpected }) => {
    const result = classifyError(thrown, "req-1");
    expect([result.error.code, result.unexpected]).toEqual([code, unexpected]);
    expect(result.error.message).not.toContain("secret");
  });
});
