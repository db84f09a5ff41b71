import { PersysError } from "@persys/schema";

/** The registry code of a failure (`INTERNAL` for anything that is not a PersysError). */
export const errorCodeOf = (error: unknown): string => (error instanceof PersysError ? error.code : "INTERNAL");
