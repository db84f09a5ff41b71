/**
 * Optional wording of an answer by an OpenAI-compatible chat-completions endpoint. The model gets
 * the question, the rules' answer and the structured findings, and may only reword them: an answer
 * that names a workload, node or event the findings do not contain is discarded and the rules' own
 * wording kept. Any failure (network, status, timeout, malformed body) also keeps the rules' answer.
 */

export interface ModelEndpoint {
  /** Base URL, e.g. `https://api.openai.com/v1` (`/chat/completions` is appended). */
  readonly url: string;
  readonly model: string;
  readonly apiKey?: string;
  readonly timeoutMs?: number;
}

export interface WordingInput {
  readonly question: string;
  /** The rules' complete answer. */
  readonly answer: string;
  /** The structured findings (proto3 JSON), the only facts the model may use. */
  readonly findings: unknown;
  /** Names the model may mention: every workload and node id in the cluster. */
  readonly knownNames: readonly string[];
}

export type Wording = { readonly text: string; readonly model: string } | { readonly rejected: string };

const SYSTEM = [
  "You word answers for operators of a Persys compute cluster.",
  "Use only the facts in the findings JSON and the draft answer; do not add causes, numbers, names or advice.",
  "Keep event ids and node and workload names exactly as given. Answer in at most five sentences.",
].join(" ");

/** Asks the endpoint to reword `input.answer`; returns the text or why it was not used. */
export async function wordAnswer(endpoint: ModelEndpoint, input: WordingInput): Promise<Wording> {
  let body: unknown;
  try {
    const response = await fetch(`${endpoint.url.replace(/\/+$/, "")}/chat/completions`, {
      method: "POST",
      headers: {
        "content-type": "application/json",
        ...(endpoint.apiKey ? { authorization: `Bearer ${endpoint.apiKey}` } : {}),
      },
      body: JSON.stringify({
        model: endpoint.model,
        temperature: 0,
        messages: [
          { role: "system", content: SYSTEM },
          {
            role: "user",
            content: `Question: ${input.question}\n\nDraft answer: ${input.answer}\n\nFindings: ${JSON.stringify(input.findings)}`,
          },
        ],
      }),
      signal: AbortSignal.timeout(endpoint.timeoutMs ?? 15_000),
    });
    if (!response.ok) return { rejected: `model endpoint answered HTTP ${response.status}` };
    body = await response.json();
  } catch (error) {
    return { rejected: `model endpoint failed: ${error instanceof Error ? error.message : String(error)}` };
  }
  const text = (body as { choices?: Array<{ message?: { content?: unknown } }> }).choices?.[0]?.message?.content;
  if (typeof text !== "string" || text.trim() === "") return { rejected: "model endpoint sent no answer" };
  const invented = inventedNames(text, input);
  if (invented.length > 0) return { rejected: `model answer names what the findings do not: ${invented.join(", ")}` };
  const model = (body as { model?: unknown }).model;
  return { text: text.trim(), model: typeof model === "string" ? model : endpoint.model };
}

/** Event ids and cluster names in `text` that appear nowhere in the findings or the draft. */
export function inventedNames(text: string, input: WordingInput): string[] {
  const facts = `${input.answer} ${JSON.stringify(input.findings)}`;
  const out = new Set<string>();
  for (const id of text.match(/\b\d{10,}-\d+\b/g) ?? []) if (!facts.includes(id)) out.add(id);
  const words = new Set(text.match(/[A-Za-z0-9][A-Za-z0-9.-]*[A-Za-z0-9]/g) ?? []);
  for (const name of input.knownNames) if (words.has(name) && !facts.includes(name)) out.add(name);
  return [...out];
}
