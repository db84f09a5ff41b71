import { useEffect, useState } from "preact/hooks";
import { type ApiClient, ApiError } from "../api/api-client.js";
import type { PlanWorkloadResponseJson, WorkloadJson } from "../api/wire-types.js";
import { ErrorBox } from "../components/error-box.js";
import { navigate, routePath } from "../components/router.js";
import { enumLabel } from "../model/format.js";
import { exampleSpec, parseSpecText, specToYaml } from "../model/spec-text.js";
import { DiagnosisPanel } from "./diagnosis-panel.js";

/** Paste or edit a spec (YAML or JSON), see where it would land and why (POST /v1/plan), then apply. */
export function PlanView({ api, from }: { api: ApiClient; from?: string }) {
  const [text, setText] = useState(exampleSpec);
  const [plan, setPlan] = useState<PlanWorkloadResponseJson>();
  const [planned, setPlanned] = useState<WorkloadJson>();
  const [error, setError] = useState<ApiError | string>();
  const [busy, setBusy] = useState(false);
  useEffect(() => {
    if (!from) return;
    api
      .get<{ workload: WorkloadJson }>(`/v1/workloads/${encodeURIComponent(from)}`)
      .then((r) => setText(specToYaml(r.workload)))
      .catch((e) => setError(e as ApiError));
  }, [from]);
  const read = (): WorkloadJson | undefined => {
    const parsed = parseSpecText(text);
    if (!parsed.ok) {
      setError(parsed.message);
      return undefined;
    }
    return parsed.workload;
  };
  const runPlan = async () => {
    const workload = read();
    if (!workload) return;
    setBusy(true);
    try {
      const result = await api.request<PlanWorkloadResponseJson>("POST", "/v1/plan", { workload });
      setPlan(result);
      setPlanned(result.workload ?? workload);
      setError(undefined);
    } catch (e) {
      setPlan(undefined);
      setError(ApiError.is(e) ? e : String(e));
    } finally {
      setBusy(false);
    }
  };
  const apply = async () => {
    const workload = read();
    if (!workload) return;
    setBusy(true);
    try {
      await api.request("PUT", `/v1/workloads/${encodeURIComponent(workload.id)}`, workload);
      navigate(routePath({ view: "workload", id: workload.id }));
    } catch (e) {
      setError(ApiError.is(e) ? e : String(e));
    } finally {
      setBusy(false);
    }
  };
  return (
    <section class="view" aria-labelledby="plan-title">
      <div class="view-head">
        <h1 id="plan-title">Plan</h1>
        <p class="muted">Paste a workload (YAML or JSON). Plan runs the scheduler without writing anything.</p>
      </div>
      <div class="plan-editor">
        <label class="field wide" for="spec-text">
          <span>Workload spec</span>
        </label>
        <textarea
          id="spec-text"
          spellcheck={false}
          rows={18}
          value={text}
          onInput={(e) => {
            setText((e.currentTarget as HTMLTextAreaElement).value);
            setPlan(undefined);
          }}
          onKeyDown={(e) => {
            if (e.key === "Enter" && (e.ctrlKey || e.metaKey)) {
              e.preventDefault();
              void runPlan();
            }
          }}
        />
        <div class="actions">
          <button type="button" disabled={busy} onClick={runPlan}>
            Plan <small class="muted">(Ctrl+Enter)</small>
          </button>
          <button type="button" class="primary" disabled={busy || !plan} onClick={apply}>
            Apply
          </button>
        </div>
      </div>
      <ErrorBox error={error} title="Not planned" />
      {plan && planned ? (
        <section aria-label="Plan result" data-testid="plan-result">
          <h2>
            {plan.schedulable ? "Schedulable" : "Not schedulable"}
            <span class="muted"> · {plan.changed ? "would change the stored workload" : "no change"}</span>
          </h2>
          <ul class="plan-replicas">
            {(plan.replicas ?? []).map((r) => (
              <li key={r.replicaIndex ?? 0}>
                replica {r.replicaIndex ?? 0}: <strong>{enumLabel(r.action, "PLAN_ACTION_")}</strong>
                {r.nodeId ? (
                  <>
                    {" "}
                    on <strong data-testid="plan-node">{r.nodeId}</strong>
                  </>
                ) : (
                  " — no node"
                )}
              </li>
            ))}
          </ul>
          {(plan.replicas ?? [])
            .filter((r) => r.diagnosis)
            .slice(0, 3)
            .map((r) => (
              <DiagnosisPanel
                key={r.replicaIndex ?? 0}
                diagnosis={r.diagnosis}
                title={`Replica ${r.replicaIndex ?? 0}`}
              />
            ))}
        </section>
      ) : null}
    </section>
  );
}
