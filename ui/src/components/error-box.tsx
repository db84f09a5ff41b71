import type { ApiError } from "../api/api-client.js";

/** The API's error body for people: code, message and every `{path, reason}` detail. */
export function ErrorBox({ error, title }: { error: ApiError | Error | string | undefined; title?: string }) {
  if (!error) return null;
  const api = typeof error === "object" && "body" in error ? (error as ApiError) : undefined;
  const message = typeof error === "string" ? error : error.message;
  return (
    <div class="error-box" role="alert">
      <strong>{title ?? "Error"}</strong>
      {api ? <span class="code"> {api.code}</span> : null}
      <p>{message}</p>
      {api?.body.details?.length ? (
        <ul>
          {api.body.details.map((d) => (
            <li key={`${d.path}:${d.reason}`}>
              {d.path ? <code>{d.path}</code> : null} {d.reason}
            </li>
          ))}
        </ul>
      ) : null}
    </div>
  );
}
