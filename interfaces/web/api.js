// The HTTP API, with the key from sessionStorage as `Authorization: Bearer`.
// The key is asked for only when the API answers 401, and never goes into a URL.

const KEY = "memagent.key";

export class ApiError extends Error {
  constructor(status, body) {
    super(body?.message || `HTTP ${status}`);
    this.status = status;
    this.code = body?.code;
  }
}

// One pending question at a time: several requests failing with 401 at once share one form.
let asking = null;

function askForKey() {
  asking ??= new Promise((resolve) => {
    const dialog = document.getElementById("key-dialog");
    const input = document.getElementById("key");
    dialog.addEventListener("close", () => {
      asking = null;
      sessionStorage.setItem(KEY, input.value.trim());
      input.value = "";
      resolve();
    }, { once: true });
    dialog.showModal();
  });
  return asking;
}

// A refused key is dropped: the next request answers 401, and the page asks for another.
export function forgetKey() {
  sessionStorage.removeItem(KEY);
}

function withKey(headers = {}) {
  const key = sessionStorage.getItem(KEY);
  return key ? { ...headers, Authorization: `Bearer ${key}` } : headers;
}

// fetch() that retries once the user has given a key, for every 401.
export async function request(path, options = {}) {
  for (;;) {
    const response = await fetch(path, { ...options, headers: withKey(options.headers) });
    if (response.status !== 401) return response;
    await askForKey();
  }
}

export async function json(path, { method = "GET", body, signal } = {}) {
  const headers = body === undefined ? {} : { "Content-Type": "application/json" };
  const response = await request(path, {
    method, headers, signal, body: body === undefined ? undefined : JSON.stringify(body),
  });
  if (response.status === 204) return null;
  const data = await response.json().catch(() => null);
  if (!response.ok) throw new ApiError(response.status, data);
  return data;
}
