/** The schema's gRPC error codec (`persys-error-bin`), which servers and the SDK share. */
import { Metadata, status } from "@grpc/grpc-js";
import {
  api,
  codeForGrpcStatus,
  decodeErrorTrailer,
  encodeErrorTrailer,
  errorCodes,
  PersysError,
  persysErrorFromServiceError,
  toGrpcStatus,
} from "@persys/schema";
import { describe, expect, it } from "vitest";

describe("grpc error codec", () => {
  it.each(errorCodes)("round-trips %s through the status and its trailer", (code) => {
    const error = new PersysError(code, `text for ${code}`, {
      details: [{ path: "a.b[0]", reason: "bad" }],
      retryable: true,
    });
    const wire = toGrpcStatus(error);
    expect(wire.code).toBe(error.grpcStatus);
    const back = persysErrorFromServiceError({ code: wire.code, details: wire.details, metadata: wire.metadata });
    expect(back.toBody()).toEqual(error.toBody());
  });

  it.each([
    { grpc: status.UNAVAILABLE, code: "UNAVAILABLE" },
    { grpc: status.DEADLINE_EXCEEDED, code: "DEADLINE_EXCEEDED" },
    { grpc: status.UNIMPLEMENTED, code: "INTERNAL" },
    { grpc: status.ABORTED, code: "CONFLICT" },
  ])("without a trailer, gRPC status $grpc is $code", ({ grpc, code }) => {
    expect(persysErrorFromServiceError({ code: grpc, details: "from grpc-js", metadata: new Metadata() }).code).toBe(
      code,
    );
    expect(codeForGrpcStatus(grpc)).toBe(code);
  });

  it("maps an unknown code to INTERNAL and ignores garbage", () => {
    const newer = Buffer.from(
      api.Error.encode({ code: 999 as api.ErrorCode, message: "newer peer", details: [], retryable: true }).finish(),
    );
    expect(decodeErrorTrailer(newer)?.toBody()).toEqual({
      code: "INTERNAL",
      message: "newer peer",
      details: [],
      retryable: true,
    });
    expect(decodeErrorTrailer(Buffer.from([0xff, 0xff, 0xff]))).toBeUndefined();
    expect(decodeErrorTrailer(encodeErrorTrailer(new PersysError("NOT_FOUND", "gone")))?.code).toBe("NOT_FOUND");
  });
});
