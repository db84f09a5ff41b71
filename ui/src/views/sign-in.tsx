import { useState } from "preact/hooks";
import { ApiClient, ApiError } from "../api/api-client.js";
import { saveToken } from "../api/session-token.js";
import { ErrorBox } from "../components/error-box.js";

/** Sign-in: an API token, checked against GET /v1/nodes and kept in this tab's sessionStorage. */
export function SignIn({ onSignedIn, notice }: { onSignedIn: () => void; notice?: ApiError }) {
  const [token, setToken] = useState("");
  const [error, setError] = useState<ApiError | undefined>(notice);
  const [busy, setBusy] = useState(false);
  const submit = async (e: Event) => {
    e.preventDefault();
    setBusy(true);
    try {
      const probe = new ApiClient({ token: () => token.trim() });
      await probe.get("/v1/nodes?pageSize=1");
      saveToken(token);
      onSignedIn();
    } catch (thrown) {
      setError(ApiError.is(thrown) ? thrown : new ApiError(0, { message: String(thrown) }));
    } finally {
      setBusy(false);
    }
  };
  return (
    <main id="main" class="sign-in">
      <form onSubmit={submit} aria-labelledby="sign-in-title">
        <h1 id="sign-in-title">Persys console</h1>
        <p class="muted">
          Sign in with an API token (<code>persys up</code> prints the admin's as <code>token:</code>).
        </p>
        <label class="field wide">
          <span>API token</span>
          <input
            name="token"
            type="password"
            autocomplete="current-password"
            required
            value={token}
            onInput={(e) => setToken((e.currentTarget as HTMLInputElement).value)}
          />
        </label>
        <button type="submit" class="primary" disabled={busy || !token.trim()}>
          Sign in
        </button>
        <ErrorBox error={error} title="Not signed in" />
      </form>
    </main>
  );
}
