import { useEffect, useState } from "preact/hooks";
import type { ClusterStore } from "../model/cluster-store.js";

/** Re-renders the component when the store changes (at most once per frame); returns the version. */
export function useStore(store: ClusterStore): number {
  const [version, setVersion] = useState(store.version);
  useEffect(() => {
    setVersion(store.version);
    return store.subscribe(() => setVersion(store.version));
  }, [store]);
  return version;
}

/** The element's content box size, kept current by a ResizeObserver. */
export function useSize(ref: { current: HTMLElement | null }): { width: number; height: number } {
  const [size, setSize] = useState({ width: 0, height: 0 });
  useEffect(() => {
    const el = ref.current;
    if (!el) return;
    const update = () => setSize({ width: el.clientWidth, height: el.clientHeight });
    update();
    const observer = new ResizeObserver(update);
    observer.observe(el);
    return () => observer.disconnect();
  }, [ref.current]);
  return size;
}
