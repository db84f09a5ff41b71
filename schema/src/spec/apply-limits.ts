/** Workloads one ApplyWorkloads call may carry (server and SDK check the same number). */
export const MAX_APPLY_WORKLOADS = 1000;
