import { request } from "node:https";

export interface HttpsJsonOptions {
  readonly ca: string;
  readonly cert?: string;
  readonly key?: string;
  readonly token?: string;
  readonly body?: unknown;
}

/** One HTTPS request with a custom CA (and optional client certificate or bearer token), JSON in and out. */
export function httpsJson(
  method: string,
  url: string,
  options: HttpsJsonOptions,
): Promise<{ status: number; body: any }> {
  return new Promise((resolve, reject) => {
    const payload = options.body === undefined ? undefined : JSON.stringify(options.body);
    const req = request(
      url,
      {
        method,
        ca: options.ca,
        ...(options.cert ? { cert: options.cert, key: options.key } : {}),
        agent: false,
        headers: {
          ...(payload ? { "content-type": "application/json" } : {}),
          ...(options.token ? { authorization: `Bearer ${options.token}` } : {}),
        },
      },
      (res) => {
        let text = "";
        res.setEncoding("utf8");
        res.on("data", (chunk) => (text += chunk));
        res.on("end", () => resolve({ status: res.statusCode ?? 0, body: text ? JSON.parse(text) : undefined }));
      },
    );
    req.on("error", reject);
    req.end(payload);
  });
}
