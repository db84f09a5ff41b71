/**
 * A Pulumi stack with Persys workloads: a web container, a Compose stack and a VM, placed by the
 * Persys scheduler. `pulumi preview` shows where each would go (from the scheduler's dry run);
 * `pulumi up` waits until each runs. See README.md.
 *
 * Config (all optional):
 * - `greeting`  — the web container's GREETING env var; changing it updates the container in place;
 * - `hostPort`  — publish the web container on this host port (default 18080);
 * - `compose`, `vm` — set `false` to leave the stack or the VM out (e.g. on a node without libvirt);
 * - `adopt`     — the id of an existing container workload to manage too, after
 *                 `pulumi import persys:index:Container adopted <id>` (declared with the same image).
 */
import * as persys from "@persys/pulumi";
import * as pulumi from "@pulumi/pulumi";

const config = new pulumi.Config();

const web = new persys.Container("web", {
  image: "persys-test/web:1",
  replicas: 1,
  memoryMiB: 64,
  env: { GREETING: config.get("greeting") ?? "hello from pulumi" },
  ports: [{ container: 8080, host: config.getNumber("hostPort") ?? 18080 }],
  restart: { mode: "always" },
  stopTimeoutSeconds: 1,
});

export const webId = web.id;
export const webRevision = web.revision;
export const webStatus = web.status;
export const webNode = web.placements.apply((placements) => placements[0]?.node ?? "");
export const webUrl = web.endpoints.apply((endpoints) => {
  const e = endpoints.find((x) => x.kind === "published-port");
  return e ? `http://${e.address === "0.0.0.0" || e.address === "" ? "127.0.0.1" : e.address}:${e.port}/` : "";
});

const blog =
  (config.getBoolean("compose") ?? true)
    ? new persys.ComposeStack("blog", {
        inlineYaml: ["services:", "  web:", "    image: persys-test/web:1", "    ports: ['8080']", ""].join("\n"),
        memoryMiB: 64,
      })
    : undefined;
export const blogStatus = blog?.status ?? "not declared";

const vm =
  (config.getBoolean("vm") ?? true)
    ? new persys.VirtualMachine("tiny", {
        vcpus: 1,
        memoryMiB: 256,
        imageName: "cirros",
        disks: [{ name: "root", sizeGiB: 1, boot: true }],
        cloudInit: { userData: "#cloud-config\nhostname: tiny\n" },
      })
    : undefined;
export const vmAddresses = vm?.endpoints.apply((endpoints) => endpoints.map((e) => e.address)) ?? [];

const adopt = config.get("adopt");
const adopted = adopt
  ? new persys.Container("adopted", { name: adopt, image: "persys-test/busybox:1", command: ["sleep", "3600"] })
  : undefined;
export const adoptedStatus = adopted?.status ?? "not declared";
