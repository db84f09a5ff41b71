import { describe, expect, it } from "vitest";
import { PagedList } from "./paged-list.js";

describe("PagedList", () => {
  const pages: Record<string, { items: number[]; nextPageToken: string }> = {
    "": { items: [1, 2], nextPageToken: "p2" },
    p2: { items: [3], nextPageToken: "p3" },
    p3: { items: [], nextPageToken: "" },
  };

  it("fetches lazily, page after page, and iterates every item", async () => {
    const fetched: string[] = [];
    const list = new PagedList(async (token) => {
      fetched.push(token);
      return pages[token]!;
    });
    expect(fetched).toEqual([]);
    for await (const item of list) {
      if (item === 1) expect(fetched).toEqual([""]);
    }
    expect(fetched).toEqual(["", "p2", "p3"]);
    expect(await list.toArray()).toEqual([1, 2, 3]);
  });

  it("stops fetching when the loop breaks", async () => {
    const fetched: string[] = [];
    const list = new PagedList(async (token) => {
      fetched.push(token);
      return pages[token]!;
    });
    for await (const _ of list) break;
    expect(fetched).toEqual([""]);
  });
});
