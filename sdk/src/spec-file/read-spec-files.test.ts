import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Readable } from "node:stream";
import { describe, expect, it } from "vitest";
import { readSpecFiles } from "./read-spec-files.js";
import { SpecFileError } from "./spec-file-error.js";

const fixtures = join(import.meta.dirname, "test-fixtures");

function folder(files: Record<string, string>): string {
  const dir = mkdtempSync(join(tmpdir(), "persys-spec-"));
  for (const [name, text] of Object.entries(files)) writeFileSync(join(dir, name), text);
  return dir;
}

describe("readSpecFiles", () => {
  it("reads files, folders (spec files only, sorted) and stdin", async () => {
    const dir = folder({
      "b.yaml": "id: b\ncontainer: {image: b}\n",
      "a.json": '{"id":"a","container":{"image":"a"}}',
      "notes.txt": "x",
    });
    const docs = await readSpecFiles([dir, join(fixtures, "web.yaml"), "-"], {
      stdin: Readable.from(["id: from-stdin\n", "container: {image: s}\n"]),
    });
    expect(docs.map((d) => d.workload.id)).toEqual(["a", "b", "web", "from-stdin"]);
    expect(docs[3]!.file).toBe("<stdin>");
  });

  it("reports the problems of every file at once", async () => {
    const error = await readSpecFiles([join(fixtures, "bad-fields.yaml"), join(fixtures, "bad-values.yaml")]).catch(
      (e) => e,
    );
    expect(error).toBeInstanceOf(SpecFileError);
    const files = new Set((error as SpecFileError).problems.map((p) => p.file.split("/").pop()));
    expect(files).toEqual(new Set(["bad-fields.yaml", "bad-values.yaml"]));
  });

  it("refuses a workload id defined twice, naming both places", async () => {
    const dir = folder({
      "one.yaml": "id: web\ncontainer: {image: a}\n",
      "two.yaml": "# again\nid: web\ncontainer: {image: b}\n",
    });
    const error = (await readSpecFiles([dir]).catch((e) => e)) as SpecFileError;
    expect(error.problems).toEqual([
      expect.objectContaining({
        line: 2,
        path: "id",
        reason: `workload web is already defined at ${join(dir, "one.yaml")}:1`,
      }),
    ]);
  });

  it.each([
    { name: "a missing file", paths: ["/nonexistent/web.yaml"], message: /cannot read \/nonexistent\/web.yaml/ },
    { name: "a folder without spec files", paths: [folder({ "x.txt": "" })], message: /no workload documents/ },
  ])("fails with INVALID_ARGUMENT for $name", async ({ paths, message }) => {
    await expect(readSpecFiles(paths)).rejects.toMatchObject({
      code: "INVALID_ARGUMENT",
      message: expect.stringMatching(message),
    });
  });
});
