/** Where the console keeps the API token: this browser tab's sessionStorage (gone when the tab closes). */
const KEY = "persys.token";

interface KeyValueStorage {
  getItem(key: string): string | null;
  setItem(key: string, value: string): void;
  removeItem(key: string): void;
}

function storage(): KeyValueStorage | undefined {
  try {
    return (globalThis as { sessionStorage?: KeyValueStorage }).sessionStorage;
  } catch {
    return undefined;
  }
}

/** The stored token, or undefined when signed out. */
export function readToken(): string | undefined {
  return storage()?.getItem(KEY) ?? undefined;
}

/** Stores the token (trimmed); an empty one signs out. */
export function saveToken(token: string): void {
  const trimmed = token.trim();
  if (trimmed) storage()?.setItem(KEY, trimmed);
  else clearToken();
}

/** Signs out: forgets the token. */
export function clearToken(): void {
  storage()?.removeItem(KEY);
}
