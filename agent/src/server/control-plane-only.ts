import {
  type handleServerStreamingCall,
  type handleUnaryCall,
  type ServerErrorResponse,
  type ServerUnaryCall,
  type ServiceDefinition,
  status,
  type UntypedHandleCall,
  type UntypedServiceImplementation,
} from "@grpc/grpc-js";

/** What is needed of a server call to see its peer. */
type PeerCall = Pick<ServerUnaryCall<unknown, unknown>, "getAuthContext">;

/** The role in the organization (O) of control-plane certificates (see the control plane's pki/principal.ts). */
export const CONTROL_PLANE_ROLE = "control-plane";

const failure = (code: status, details: string): ServerErrorResponse =>
  Object.assign(new Error(details), { code, details });

/** Why `call` may not use the agent's services, or undefined when its peer is a control plane. */
export function refusal(call: PeerCall): ServerErrorResponse | undefined {
  const subject = call.getAuthContext()?.sslPeerCertificate?.subject as Record<string, unknown> | undefined;
  if (!subject) {
    return failure(
      status.UNAUTHENTICATED,
      "no client certificate signed by the cluster CA: only the control plane may call this agent",
    );
  }
  if (subject.O !== CONTROL_PLANE_ROLE) {
    return failure(
      status.PERMISSION_DENIED,
      `${String(subject.CN)} (${String(subject.O)}) may not call this agent: only the control plane may`,
    );
  }
  return undefined;
}

/**
 * The handlers of `implementation` behind a caller check: only a peer whose verified certificate says
 * O=`control-plane` gets through; others get UNAUTHENTICATED (no certificate) or PERMISSION_DENIED.
 */
export function controlPlaneOnly(
  definition: ServiceDefinition,
  implementation: UntypedServiceImplementation,
): UntypedServiceImplementation {
  const guarded: UntypedServiceImplementation = {};
  for (const [name, method] of Object.entries(definition)) {
    const handler = implementation[name];
    if (!handler) continue;
    if (method.responseStream) {
      const stream = handler as handleServerStreamingCall<unknown, unknown>;
      const guardedStream: handleServerStreamingCall<unknown, unknown> = (call) => {
        const no = refusal(call);
        if (no) call.emit("error", no);
        else stream(call);
      };
      guarded[name] = guardedStream as UntypedHandleCall;
    } else {
      const unary = handler as handleUnaryCall<unknown, unknown>;
      const guardedUnary: handleUnaryCall<unknown, unknown> = (call, callback) => {
        const no = refusal(call);
        if (no) callback(no);
        else unary(call, callback);
      };
      guarded[name] = guardedUnary as UntypedHandleCall;
    }
  }
  return guarded;
}
